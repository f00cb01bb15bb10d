// Internals of the fuzz campaign (campaign/campaign.h) shared by its files: the parent loop
// (campaign.cc), the worker (campaign_worker.cc) and the output folder (campaign_out.cc).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "campaign/campaign.h"
#include "harness/repro.h"
#include "report/campaign_summary.h"

namespace fusefuzz::campaign_internal {

using Clock = std::chrono::steady_clock;

// Set by SIGINT/SIGTERM; the only mutable global, as a signal handler needs one.
extern volatile sig_atomic_t g_stop;
void OnStop(int);

inline double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string ErrnoText(const std::string& what);

// Cases a resumed campaign has already checked (CampaignStats::progress_*).
struct Progress {
  int jobs = 0;
  std::vector<int64_t> next;
  bool Checked(int64_t i) const { return jobs > 0 && i < next[static_cast<size_t>(i % jobs)]; }
};

// Worker: this shard's cases first, first + stride, ... (CampaignOptions::CaseIndex maps them to
// the campaign's) until a limit or a stop request, several per target call (a batch) when the
// target has the capability batch, one per call up to case `alone_until`. Messages to
// the parent on `fd`: {"batch": [i, ...]} before a batch's call, then {"begin": i} before each
// case's judgement and filing; {"end": i, "verdict", "kind", "signature", "bucket",
// "known", "duplicate", "reason" (of an UNSUPPORTED), "rewrites": {rule: count}, and for batched
// cases "batched", "alone" (run again alone), "batch_only" (failed in the batch only),
// "spanning_rewrites"}; {"fatal": message} when fusefuzz cannot write its output (the worker then
// exits with status 2: that is the harness's error, never a finding).
[[noreturn]] void WorkerMain(const CampaignOptions& o, int64_t first, int stride, int fd,
                             Clock::time_point start, pid_t parent, const Progress& done,
                             int64_t alone_until);

// The reproducer of this shard's case `local` (the campaign's CaseIndex(local)), on which a
// worker died (`timeout`: killed after --case-timeout) with wait status `status`: regenerated
// from its seed, kind CRASH or TIMEOUT.
Repro WorkerDeathRepro(const CampaignOptions& o, int64_t local, bool timeout, int status);

// Fails now, not after the campaign, when the JUnit file cannot be written (its exit status 2
// would hide the campaign's 1). A file created only for the check is removed again.
void CheckWritable(const std::string& path);

// The options besides seed, target and faults that decide which cases are findings and how they
// are filed: a shard's summary records them, and `fusefuzz merge` refuses shards that differ.
nlohmann::json ShardOptions(const CampaignOptions& o);

// Creates OUT, locks it, and handles what a previous campaign left there (refuse, --resume or
// --force). Returns the lock descriptor; fills `stats`/`done` when resuming.
int PrepareOut(const CampaignOptions& o, CampaignStats* stats, Progress* done);

}  // namespace fusefuzz::campaign_internal
