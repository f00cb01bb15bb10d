// The fuzz campaign: generate graphs, check each on the target, blame/minimize/report findings.
// Runs J worker processes (case i goes to worker i mod J) that report to the parent one JSON
// object per line. A worker writes each new finding into a temporary folder and renames it into
// place when complete, under a per-signature lock (OUT/.claims/), so a worker that dies loses
// nothing already written and leaves no half-written folder; the parent restarts it after
// recording the case it died on as a crash finding, prints a status line about once a second,
// and writes the summary (also on Ctrl-C). OUT is locked (OUT/.lock) for the whole campaign.
// docs/campaign.md describes the layout.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "campaign/known_signatures.h"
#include "campaign/known_upstream.h"
#include "generators/gen_config.h"
#include "harness/check.h"
#include "targets/target.h"

namespace fusefuzz {

struct CampaignOptions {
  double seconds = 0;  // 0 = no time limit
  int64_t graphs = 0;  // 0 = no count limit (one of the two must be set)
  uint64_t seed = 1;
  int jobs = 1;
  std::string target = EmbeddedSpecText();  // a TargetSpec's text
  TargetSettings target_settings;
  CheckOptions check;
  GenConfig gen;
  std::string out_dir = "out/fuzz";  // cli DefaultOut("fuzz")
  bool minimize = true;
  double minimize_budget = 10;  // seconds per finding
  // Before filing a fusion finding, rerun the unoptimized target on inputs within rounding of the
  // case's (harness/sensitivity.h): a failure there makes it a kernel finding.
  bool sensitivity_check = true;
  KnownSignatures known;  // --known: signatures counted as known, not new (shared, not copied)
  // A built-in target's known upstream bugs (corpus/known baseline of the release its hello
  // names), loaded by RunCampaign unless false (`--known none`); `upstream` adds to it.
  bool upstream_baseline = true;
  KnownUpstream upstream;
  double case_timeout = 60;  // seconds: a worker stuck this long on one case is killed
  // Cases per target call (--batch; harness/batch.h): 0 = what the target's hello suggests, 1 =
  // one case per call. Targets without the capability batch always get one.
  int batch = 0;
  std::string junit;   // JUnit XML path, or empty
  bool status = true;  // status line on stderr
  // A non-empty --out is refused unless one of these is given: `resume` continues the campaign
  // found there (same seed and target; findings kept, counts extended, cases already checked
  // skipped), `force` deletes its findings and summary first.
  bool resume = false;
  bool force = false;
  std::string command_line;  // how the campaign was started, for summary.md ("" = unknown)
  // --shard I/N: only the cases k of the campaign with k mod N == I, each with its own
  // CaseSeed(seed, k), so that N shards of the same --graphs and seed check exactly the cases of
  // one unsharded campaign (`fusefuzz merge` joins their folders). shards == 1: not sharded.
  int shard = 0;
  int shards = 1;
  bool sharded = false;  // --shard given (also 0/1): summary.json records it for merge
  // Case k of the campaign for this shard's j-th case.
  int64_t CaseIndex(int64_t j) const { return shard + static_cast<int64_t>(shards) * j; }
};

// Parses --shard "I/N" (decimal, 0 <= I < N <= kMaxShards). Throws InputError naming --shard.
inline constexpr int kMaxShards = 1 << 16;
void ParseShard(const std::string& text, int* shard, int* shards);

// How many of the first `graphs` cases of the campaign fall to shard `shard` of `shards`.
int64_t ShardCases(int64_t graphs, int shard, int shards);

// Seed of case `index` of a campaign with base seed `seed` (what `fusefuzz gen --seed` takes).
uint64_t CaseSeed(uint64_t seed, int64_t index);

// Returns the exit status: 0 no findings, 1 findings, 2 when fusefuzz could not write its output
// (the campaign then stops cleanly; the message is on stderr). Throws InputError for bad options
// and an unusable --out.
int RunCampaign(const CampaignOptions& opts);

}  // namespace fusefuzz
