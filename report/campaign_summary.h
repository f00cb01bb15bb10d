// Campaign statistics, the status line, and the end-of-campaign files: summary.json,
// summary.md and (optionally) JUnit XML so CI systems show findings as failed tests.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generators/coverage.h"

namespace fusefuzz {

struct SignatureStats {
  std::string kind;
  int64_t count = 0;        // cases with this signature (first + duplicates)
  int64_t first_case = -1;  // lowest case index seen
  // The cheap pre-minimization key (BucketKey) of the first case; findings/<signature> is the
  // minimized case's Signature. Several buckets may merge into one signature.
  std::string bucket;
  std::string pattern;  // the minimized case's op chain (OpChain), "" when unknown
};

// What a worker reports about one finished case.
struct CaseReport {
  std::string verdict;    // PASS, MISMATCH, ...
  std::string kind;       // "" for no finding
  std::string signature;  // of the (minimized) finding
  std::string bucket;     // BucketKey of the finding
  bool duplicate = false;
  bool known = false;   // matches --known: counted apart, not a new finding
  bool slot = false;    // one of its bucket's minimized cases (campaign/finding_filing.h)
  std::string pattern;  // OpChain of the minimized case, for the case that was filed
  // UNSUPPORTED: the target's reason, as its ErrorClass (particulars removed).
  std::string unsupported_reason;
  int64_t index = -1;
  double seconds = -1;  // since the campaign started
  // PASS: how much of its admitted error the worst float element used (ratio / k, 0..1), and
  // of its derived spread E the worst integer element used beyond rounding ((|c - t| - 0.5) /
  // E); -1 when not judged.
  double margin = -1, grid_margin = -1;
  double grid_e = 0;  // that integer element's E, in steps
};

// How a shard's finding cases of one bucket were signed, for `fusefuzz merge`: the bucket's
// first minimized cases sign themselves, every later case takes the first one's signature. One
// campaign minimizes the first cases of the whole campaign, each shard its own first: the merge
// redoes the choice from these records (campaign/campaign_merge.h).
struct BucketSlot {
  int64_t case_index = -1;
  std::string signature, kind, pattern;
  bool known = false;
};
struct BucketRecord {
  // The lowest-index minimized cases, at most kKeptSlots (kMinimizedPerBucket of the campaign):
  // only these can be among the campaign's first.
  static constexpr size_t kKeptSlots = 3;
  std::vector<BucketSlot> slots;
  int64_t others = 0;         // the bucket's other cases
  int64_t others_first = -1;  // the lowest of their case indexes
  std::string others_kind;    // their kind (for a bucket none of whose cases was signed)
};

// The passing case that came closest to its admitted error: how much room the oracle's bound
// left on legitimate engines (a calibration figure, issue 26/27).
struct ClosestPass {
  double share = -1;  // worst element's |c - r| over its admitted error; -1: none
  int64_t case_index = -1;
  double e = 0;  // grid: the element's E in steps (E > 1: the element was not informative)
};

// Per finding kind: new and known cases.
struct KindStats {
  int64_t count = 0;  // new findings (cases), duplicates included
  int64_t known = 0;  // cases matching --known
};

// When the first finding of a kind came (one per kind: fusion, kernel, crash, ...).
struct FirstFinding {
  int64_t case_index = -1;
  int64_t graphs = -1;  // cases finished by then
  double seconds = -1;  // since the campaign started
};

// Several cases per target call (--batch; docs/campaign.md, "Batches").
struct BatchStats {
  int64_t batched = 0;     // cases checked in a batch
  int64_t alone = 0;       // of them, run again alone (not PASS in the batch, or it failed)
  int64_t batch_only = 0;  // failed in the batch but not alone: never findings
  std::vector<int64_t> batch_only_cases;  // their case indices, the first kMaxListed
  int64_t spanning_rewrites = 0;          // rewrites over the nodes of two cases
  int64_t deaths = 0;  // workers that died in a batch's call (its cases ran again alone)
  static constexpr size_t kMaxListed = 100;
  bool empty() const { return batched == 0 && deaths == 0; }
  void Add(const BatchStats& o);
};
nlohmann::json BatchStatsToJson(const BatchStats& b);
BatchStats BatchStatsFromJson(const nlohmann::json& j);  // throws nlohmann's errors on bad types

struct CampaignStats {
  std::string command_line;  // the exact command that reruns the campaign, or ""
  uint64_t seed = 0;
  nlohmann::json gen_config;  // the generator's config (ConfigToJson): how to regenerate a case
  std::string target, oracle;
  std::vector<std::string> inject;
  int64_t graphs = 0;
  int64_t findings = 0;  // cases that are new findings (incl. duplicates; known ones apart)
  int64_t known = 0;     // cases whose finding matched --known
  int64_t worker_errors = 0;
  BatchStats batches;
  double seconds = 0;
  bool interrupted = false;
  // Why a campaign stopped early other than by a signal ("fusefuzz could not write its output"):
  // said in place of "interrupted" (Ctrl-C or SIGTERM), so a full disk does not read as one.
  std::string stopped_because;
  double first_finding_seconds = -1;
  int64_t first_finding_graphs = -1;
  std::map<std::string, int64_t> verdicts;  // "PASS" -> count
  std::map<std::string, SignatureStats> unique;
  // Known upstream bugs (corpus/known baseline): signature -> link, given by the campaign; the
  // known cases with such a signature are counted in `known` and again here, per signature.
  std::map<std::string, std::string> upstream_links;
  std::map<std::string, SignatureStats> known_upstream;
  std::map<std::string, FirstFinding> first_by_kind;
  std::map<std::string, KindStats> by_kind;
  // Why the target declined graphs: ErrorClass of its message -> cases.
  std::map<std::string, int64_t> unsupported_reasons;
  // Rewrites applied by the target's optimized runs, per rule (the target's own names): proof
  // that a clean campaign exercised each fusion. Filled from the workers' case reports.
  std::map<std::string, int64_t> rule_fires;
  // The fusions the target declares (targets/rule_names.h, DeclaredFusions): engine coverage,
  // which of them fired (rule_fires) and which never did (report/engine_coverage.h).
  std::vector<std::string> engine_fusions;
  std::string engine;  // the hello's "engine" (name and version), or ""
  // Declared fusions this target cannot fire at all, and why (hello "unreachable_fusions").
  std::map<std::string, std::string> engine_unreachable;
  ClosestPass closest_float, closest_grid;
  // Generator coverage classes of the graphs checked (generators/coverage.h): what the campaign
  // exercised; summary.md lists the classes below the threshold.
  CoverageTally coverage;
  // Spelling -> graphs that used it (issue 51); summary.json "spellings" when not empty.
  std::map<std::string, int64_t> spellings;
  // Where a resumed campaign continues (written to summary.json as "progress"): case i has been
  // checked iff i < progress_next[i % progress_jobs]. progress_jobs == 0: unknown.
  int progress_jobs = 0;
  std::vector<int64_t> progress_next;
  // `fuzz --shard I/N`: {"index", "count", "graphs" (the whole campaign's --graphs), "cases"
  // (this shard's), "options"}; null when not sharded. Progress then counts the shard's cases.
  nlohmann::json shard;
  // `fusefuzz merge`: the shards merged and whether they add up to the whole campaign; null
  // for a campaign's own summary.
  nlohmann::json merge;
  // Bucket key -> how its finding cases were signed: written to summary.json ("buckets") for a
  // shard only, where `fusefuzz merge` needs it.
  std::map<std::string, BucketRecord> buckets;

  void AddCase(const CaseReport& c);
  std::string StatusLine(double elapsed) const;
  // `written` false: the summary files could not be written, so their paths are not named.
  std::string SummaryText(const std::string& out_dir, bool written = true) const;
};

// Folders whose minimized op chains match, activations aside: one root cause often gives one
// folder per activation it hides behind ("3 folders, 1 pattern: Conv→{Clip, HardSwish, Relu6}").
struct PatternGroup {
  std::string kind;
  std::string pattern;                  // "Conv→{Clip, HardSwish, Relu6}"
  std::vector<std::string> signatures;  // the folders
  int64_t cases = 0;
};
// Groups of the findings with a known pattern, largest first.
std::vector<PatternGroup> GroupByPattern(const CampaignStats& s);

// One line on what a verdict means ("" for an unknown name).
std::string VerdictMeaning(const std::string& verdict);

// summary.md's text (also the top of summary.html).
std::string SummaryMarkdown(const CampaignStats& s);

// summary.json, summary.md, summary.html (report/html_report.h) and, when junit_path is set,
// JUnit XML.
// & < > " escaped, for XML (JUnit) and HTML text and attributes.
std::string XmlEscape(const std::string& in);

// Inside out_dir every file is created or replaced, never written through a planted link
// (ir/folder_write.h). `full` false: summary.json only (the campaign's checkpoint).
void WriteCampaignSummary(const std::string& out_dir, const CampaignStats& s,
                          const std::string& junit_path, bool full = true);

}  // namespace fusefuzz
