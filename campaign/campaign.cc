// The campaign's parent process: validates the options, starts the workers, gathers their
// reports into the statistics, turns a dead or stuck worker's case into a finding, and writes
// the summary. The workers are in campaign_worker.cc, the output folder in campaign_out.cc.
#include "campaign/campaign.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "campaign/campaign_constraints.h"
#include "campaign/campaign_internal.h"
#include "campaign/finding_filing.h"
#include "ir/closest_name.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "optimizer/pipeline.h"
#include "optimizer/registry.h"
#include "report/campaign_summary.h"
#include "report/engine_coverage.h"
#include "report/finding_writer.h"
#include "targets/rule_names.h"

namespace fusefuzz {

namespace campaign_internal {
volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }
}  // namespace campaign_internal

namespace {

using namespace campaign_internal;  // NOLINT: this file is the campaign's own
namespace fs = std::filesystem;
using nlohmann::json;

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  int64_t next = 0;         // next case index this worker would take
  int64_t current = -1;     // case in progress (-1: none)
  Clock::time_point since;  // start of the current case or batch
  // The batch in progress ({"batch": [...]}: its cases run in one target call), empty when none:
  // a worker that dies in it files nothing and restarts with those cases alone.
  std::vector<int64_t> batch;
  bool done = false;
  bool fatal = false;  // said {"fatal": ...}: its exit is not a crash
};

}  // namespace

uint64_t CaseSeed(uint64_t seed, int64_t index) {
  // splitmix64 finalizer over (seed, index): independent, well-spread seeds per case.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(index) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int RunCampaign(const CampaignOptions& in) {
  CampaignOptions o = in;
  if (o.seconds <= 0 && o.graphs <= 0) throw InputError("fuzz", "give --seconds or --graphs");
  if (o.jobs < 1) throw InputError("--jobs", "must be >= 1");
  if (o.resume && o.force) throw InputError("--resume", "cannot be combined with --force");
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards) {
    throw InputError("--shard", std::to_string(o.shard) + "/" + std::to_string(o.shards) +
                                    ": must be I/N with 0 <= I < N");
  }
  // From here on o.graphs counts this shard's cases (its workers and progress count in them);
  // CaseIndex maps them to the campaign's.
  const int64_t campaign_graphs = o.graphs;
  if (o.graphs > 0) {
    o.graphs = ShardCases(o.graphs, o.shard, o.shards);
    if (o.graphs == 0) {
      throw InputError("--shard", std::to_string(o.shard) + "/" + std::to_string(o.shards) +
                                      " has no cases among --graphs " +
                                      std::to_string(campaign_graphs) +
                                      " (give at least as many graphs as shards)");
    }
  }
  if (IsEmbeddedSpec(o.target)) {
    CheckRuleNames(MakeEmbeddedTarget()->caps(), o.check.opt);  // with "did you mean"
    BuildPipeline(o.check.opt);  // unknown rule/fault names fail here, before any case
  } else {
    // An external target's rules have its own names (--disable Pad_Fusion), checked against its
    // hello below (CheckRuleNames). Faults are fusefuzz's catalogue whatever the target.
    for (size_t i = 0; i < o.check.opt.inject.size(); ++i) {
      if (!FindFault(o.check.opt.inject[i])) {
        std::vector<std::string> faults;
        for (const FaultInfo& f : AllFaults()) faults.emplace_back(f.rule->name());
        throw InputError("--inject", "unknown fault '" + o.check.opt.inject[i] + "'" +
                                         DidYouMean(o.check.opt.inject[i], faults) +
                                         " (fusefuzz list faults)");
      }
    }
  }
  ValidateConfig(o.gen);
  if (!o.junit.empty()) CheckWritable(o.junit);
  std::vector<std::string> engine_fusions;
  std::string engine;
  std::map<std::string, std::string> engine_unreachable;
  {
    // Validate the target once (an external program must start and say hello) and restrict the
    // generator to the ops it supports.
    std::unique_ptr<Target> t = MakeTarget(o.target, o.target_settings);
    CheckRuleNames(t->caps(), o.check.opt);
    std::set<Op> allowed;
    for (Op op : o.gen.allowed_ops)
      if (t->caps().ops.count(op)) allowed.insert(op);
    if (allowed.empty()) throw InputError("--target", "the target supports none of the ops");
    o.gen.allowed_ops = allowed;
    // What the target says it cannot run is never generated (its hello's "constraints").
    ApplyTargetConstraints(t->caps().constraints, &o.gen);
    engine_fusions = DeclaredFusions(t->caps());
    engine = t->caps().engine;
    for (const auto& [name, why] : t->caps().unreachable_fusions)
      if (std::find(engine_fusions.begin(), engine_fusions.end(), name) != engine_fusions.end())
        engine_unreachable[name] = why;
    // Spellings: the target's (a config's own list narrows them; spelling_rate 0 turns them off).
    const std::set<std::string> writes = TargetSpellings(t->caps());
    std::set<std::string> spellings;
    for (const std::string& sp : writes) {
      if (o.gen.spellings.empty() || o.gen.spellings.count(sp)) spellings.insert(sp);
    }
    o.gen.spellings = spellings;
  }
  CampaignStats stats;
  Progress done;
  const int lock_fd = PrepareOut(o, &stats, &done);
  if (o.upstream_baseline) {
    const KnownUpstream baseline = BaselineFor(KnownBaselineDir(), o.target, engine);
    for (const auto& [sig, bug] : baseline.bugs()) o.upstream.Add(sig, bug);
    for (const std::string& f : baseline.files) {
      if (o.status)
        std::fprintf(stderr, "fuzz: known upstream bugs of %s: %s (--known none: off)\n",
                     engine.c_str(), std::filesystem::path(f).filename().c_str());
    }
  }
  for (const auto& [sig, bug] : o.upstream.bugs()) stats.upstream_links[sig] = bug.link;
  // The target's hello, not a resumed summary's, says what it has now.
  stats.engine_fusions = engine_fusions;
  stats.engine = engine;
  stats.engine_unreachable = engine_unreachable;
  const OutLayout layout(o.out_dir);
  const double previous_seconds = stats.seconds;

  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const Clock::time_point start = Clock::now();
  stats.seed = o.seed;
  stats.gen_config = ConfigToJson(o.gen);
  stats.command_line = o.command_line;
  stats.target = o.target;
  stats.inject = o.check.opt.inject;
  stats.oracle = std::string(OracleKindName(o.check.oracle.kind));
  if (o.sharded) {
    stats.shard = {{"index", o.shard},
                   {"count", o.shards},
                   {"graphs", campaign_graphs},
                   {"cases", o.graphs},
                   {"options", ShardOptions(o)}};
  }
  std::vector<Worker> workers(static_cast<size_t>(o.jobs));
  const pid_t self = ::getpid();
  std::string fatal;  // fusefuzz could not write its output: stop, exit 2

  auto skip_done = [&](int64_t i) {
    while (done.Checked(i)) i += o.jobs;
    return i;
  };
  auto spawn = [&](size_t w, int64_t first, int64_t alone_until) {
    int fds[2];
    if (::pipe(fds) != 0) throw InputError("fuzz", ErrnoText("pipe"));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw InputError("fuzz", ErrnoText("fork"));
    if (pid == 0) {
      ::close(fds[0]);
      for (size_t k = 0; k < workers.size(); ++k)
        if (workers[k].fd >= 0) ::close(workers[k].fd);
      WorkerMain(o, first, o.jobs, fds[1], start, self, done, alone_until);
    }
    ::close(fds[1]);
    workers[w].pid = pid;
    workers[w].fd = fds[0];
    workers[w].buffer.clear();
    workers[w].next = skip_done(first);
    workers[w].current = -1;
    workers[w].batch.clear();
    workers[w].done = false;
    workers[w].fatal = false;
  };
  auto stop_all = [&](const std::string& why) {
    if (fatal.empty()) fatal = why;
    for (auto& wk : workers)
      if (wk.pid > 0) ::kill(wk.pid, SIGTERM);  // they stop after their current case
  };
  for (size_t w = 0; w < workers.size(); ++w) spawn(w, static_cast<int64_t>(w), -1);

  // Bucket -> the first filed case of it (kind, signature); duplicates waiting for one.
  std::map<std::string, CaseReport> resolved;
  std::map<std::string, std::vector<CaseReport>> pending;
  auto handle_line = [&](Worker& wk, const std::string& line) {
    json m = json::parse(line, nullptr, false);
    try {
      if (!m.is_object()) throw std::runtime_error("not a JSON object");
      if (m.contains("batch")) {
        wk.batch = m["batch"].get<std::vector<int64_t>>();
        wk.since = Clock::now();
      } else if (m.contains("begin")) {
        wk.current = m["begin"].get<int64_t>();
        wk.batch.clear();
        wk.since = Clock::now();
      } else if (m.contains("fatal")) {
        wk.fatal = true;
        stop_all(m["fatal"].get<std::string>());
      } else {
        int64_t index = m.at("end").get<int64_t>();
        wk.current = -1;
        wk.next = skip_done(index + o.jobs);
        CaseReport c;
        c.verdict = m.at("verdict").get<std::string>();
        c.index = o.CaseIndex(index);
        c.seconds = previous_seconds + Since(start);
        if (const json& kind = m.at("kind"); !kind.is_null()) c.kind = kind.get<std::string>();
        if (auto sig = m.find("signature"); sig != m.end() && !sig->is_null())
          c.signature = sig->get<std::string>();
        if (auto b = m.find("bucket"); b != m.end() && !b->is_null())
          c.bucket = b->get<std::string>();
        c.duplicate = m.at("duplicate").get<bool>();
        c.slot = m.value("slot", false);
        c.known = m.value("known", false);
        c.unsupported_reason = m.value("reason", "");
        c.pattern = m.value("pattern", "");
        c.margin = m.value("margin", -1.0);
        c.grid_margin = m.value("grid_margin", -1.0);
        c.grid_e = m.value("grid_e", 0.0);
        if (!c.kind.empty() && c.signature.empty()) {
          // A duplicate of a bucket whose first cases are still being minimized: counted once
          // their signature is known (or under the bucket at the end).
          auto r = resolved.find(c.bucket);
          if (r == resolved.end()) {
            pending[c.bucket].push_back(c);
          } else {
            c.kind = r->second.kind;
            c.signature = r->second.signature;
            c.known = r->second.known;
            stats.AddCase(c);
          }
        } else {
          stats.AddCase(c);
          if (!c.kind.empty() && !c.bucket.empty() && !resolved.count(c.bucket)) {
            resolved[c.bucket] = c;
            for (CaseReport& p : pending[c.bucket]) {
              p.kind = c.kind;
              p.signature = c.signature;
              p.known = c.known;
              stats.AddCase(p);
            }
            pending.erase(c.bucket);
          }
        }
        if (m.value("batched", false)) {
          BatchStats b;
          b.batched = 1;
          b.alone = m.value("alone", false) ? 1 : 0;
          if (m.value("batch_only", false)) {
            b.batch_only = 1;
            b.batch_only_cases.push_back(c.index);
          }
          b.spanning_rewrites = m.value("spanning_rewrites", int64_t{0});
          stats.batches.Add(b);
        }
        for (const auto& [rule, n] : m.at("rewrites").items()) {
          stats.rule_fires[rule] += n.get<int64_t>();
        }
        stats.coverage.Add(m.at("coverage").get<std::map<std::string, int64_t>>());
        if (auto sp = m.find("spellings"); sp != m.end()) {
          for (const auto& [name, n] : sp->items()) stats.spellings[name] += n.get<int64_t>() > 0;
        }
      }
    } catch (const std::exception& e) {
      // Workers are ours: this is a fusefuzz bug, not the target's; say so and go on.
      std::fprintf(stderr, "fusefuzz: internal error: bad worker message (%s): %.200s\n", e.what(),
                   line.c_str());
    }
  };

  // A worker died (or was killed for a stuck case): the case it was on becomes a finding written
  // here, from its seed, and the worker restarts after it.
  auto handle_death = [&](size_t w, int status, bool killed_for_timeout) {
    Worker& wk = workers[w];
    ::close(wk.fd);
    wk.fd = -1;
    wk.pid = -1;
    bool clean = !killed_for_timeout && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean || wk.fatal || !fatal.empty()) {
      wk.done = true;
      return;
    }
    // Died in a batch: no case of it is charged; they run again alone, where a crash or a hang
    // is the one case's.
    int64_t alone_until = -1;
    if (!wk.batch.empty()) {
      ++stats.worker_errors;
      ++stats.batches.deaths;
      alone_until = wk.batch.back();
      wk.next = wk.batch.front();
      wk.batch.clear();
      if (!g_stop && stats.worker_errors <= 16 * o.jobs) {
        spawn(w, wk.next, alone_until);
      } else {
        wk.done = true;
      }
      return;
    }
    // Killed between two cases (e.g. from outside, while it was reporting the last one): the
    // case it was about to take is the one charged, as the worker would have started it next.
    if (wk.current < 0 && (o.graphs <= 0 || wk.next < o.graphs)) wk.current = wk.next;
    ++stats.worker_errors;
    if (wk.current >= 0) {
      int64_t i = wk.current;
      Repro r = WorkerDeathRepro(o, i, killed_for_timeout, status);
      std::string sig = Signature(r);
      try {
        bool fresh = PublishFinding(layout, sig, r);
        CaseReport c;
        c.verdict = r.verdict;
        c.kind = std::string(FindingKindName(r.kind));
        c.signature = c.bucket = sig;
        c.duplicate = !fresh;
        c.slot = true;  // signed on its own, as a bucket's minimized case is
        c.index = o.CaseIndex(i);
        c.seconds = previous_seconds + Since(start);
        stats.AddCase(c);
      } catch (const OutputError& e) {
        stop_all(e.what());
        wk.done = true;
        return;
      }
      wk.next = skip_done(i + o.jobs);
    }
    // Restart after the case, unless the campaign is over or workers keep dying (a target that
    // cannot even start must not be restarted forever).
    if (!g_stop && !(o.seconds > 0 && Since(start) >= o.seconds) &&
        !(o.graphs > 0 && wk.next >= o.graphs) && stats.worker_errors <= 16 * o.jobs) {
      spawn(w, wk.next, -1);
    } else {
      wk.done = true;
    }
  };

  // The statistics as a summary would hold them now: duplicates of buckets whose slot holders
  // have not finished are counted under the bucket key (which names no folder), and each worker
  // resumes at the first case it has not finished (with the same --jobs the previous
  // campaign's progress merges exactly; see docs/campaign.md).
  auto snapshot = [&](bool interrupted) {
    CampaignStats s = stats;
    for (const auto& [bucket, cases] : pending) {
      for (CaseReport c : cases) {
        c.signature = bucket;
        s.AddCase(c);
      }
    }
    s.seconds = previous_seconds + Since(start);
    s.interrupted = interrupted;
    s.progress_jobs = o.jobs;
    s.progress_next.assign(static_cast<size_t>(o.jobs), 0);
    for (size_t w = 0; w < workers.size(); ++w) {
      int64_t next = workers[w].next;
      if (done.jobs == o.jobs) next = std::max(next, done.next[w]);
      s.progress_next[w] = next;
    }
    return s;
  };
  // A campaign killed outright (SIGKILL, power loss) keeps what its last checkpoint counted:
  // summary.json is replaced atomically every kCheckpointSeconds, marked interrupted, and
  // --resume continues from it (summary.md and .html are written at the end only).
  constexpr double kCheckpointSeconds = 5;
  double last_checkpoint = 0;
  bool checkpoint_warned = false;

  double last_status = 0;
  bool forwarded = false;
  while (true) {
    bool any = false;
    std::vector<pollfd> pfds;
    std::vector<size_t> owner;
    for (size_t w = 0; w < workers.size(); ++w) {
      if (workers[w].fd >= 0) {
        pfds.push_back({workers[w].fd, POLLIN, 0});
        owner.push_back(w);
        any = true;
      }
    }
    if (!any) break;
    int n = ::poll(pfds.data(), pfds.size(), 200);
    if (g_stop && !forwarded) {
      forwarded = true;
      for (auto& wk : workers)
        if (wk.pid > 0) ::kill(wk.pid, SIGINT);
    }
    for (size_t k = 0; n > 0 && k < pfds.size(); ++k) {
      if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& wk = workers[owner[k]];
      char buf[4096];
      ssize_t got = ::read(wk.fd, buf, sizeof buf);
      if (got > 0) {
        wk.buffer.append(buf, static_cast<size_t>(got));
        size_t nl;
        while ((nl = wk.buffer.find('\n')) != std::string::npos) {
          handle_line(wk, wk.buffer.substr(0, nl));
          wk.buffer.erase(0, nl + 1);
        }
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        int status = 0;
        ::waitpid(wk.pid, &status, 0);
        handle_death(owner[k], status, false);
      }
    }
    // A case stuck beyond the timeout: kill the worker; the case becomes a TIMEOUT finding.
    for (size_t w = 0; w < workers.size(); ++w) {
      Worker& wk = workers[w];
      // A batch has its cases' time together.
      const double limit =
          o.case_timeout * static_cast<double>(std::max<size_t>(1, wk.batch.size()));
      if (wk.pid > 0 && (wk.current >= 0 || !wk.batch.empty()) && Since(wk.since) > limit) {
        ::kill(wk.pid, SIGKILL);
        int status = 0;
        ::waitpid(wk.pid, &status, 0);
        handle_death(w, status, true);
      }
    }
    double t = Since(start);
    if (t - last_checkpoint >= kCheckpointSeconds && fatal.empty()) {
      last_checkpoint = t;
      try {
        WriteCampaignSummary(o.out_dir, snapshot(true), "", /*full=*/false);
      } catch (const OutputError& e) {
        // The final summary reports it if it persists; a checkpoint is not worth stopping for.
        if (!checkpoint_warned) {
          std::fprintf(stderr, "fusefuzz: warning: could not checkpoint the summary: %s\n",
                       e.what());
        }
        checkpoint_warned = true;
      }
    }
    if (o.status && t - last_status >= 1.0) {
      last_status = t;
      std::fprintf(stderr, "%s\n", stats.StatusLine(previous_seconds + t).c_str());
    }
  }
  // Duplicates of buckets whose slot holders never finished (killed mid-minimization) are
  // counted under the bucket key (snapshot).
  stats = snapshot(g_stop != 0 || !fatal.empty());
  if (!fatal.empty()) stats.stopped_because = "fusefuzz could not write its output";
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::error_code ec;
  // Left by a worker killed mid-finding (a link is not followed); the next run makes it again:
  // a finished campaign's folder holds no working files (issue 45, item 16).
  fs::remove_all(layout.tmp, ec);
  bool summary_written = true;
  try {
    WriteCampaignSummary(o.out_dir, stats, o.junit);
  } catch (const OutputError& e) {
    summary_written = false;
    std::fprintf(stderr, "fusefuzz: error: could not write the summary: %s\n", e.what());
  }
  std::fprintf(stderr, "%s", stats.SummaryText(o.out_dir, summary_written).c_str());
  if (!o.gen.spellings.empty()) {
    // Spellings the target writes that no graph of this run used: not tested (issue 51).
    std::string unused;
    for (const std::string& sp : o.gen.spellings) {
      if (!stats.spellings.count(sp)) unused += " " + sp;
    }
    std::fprintf(stderr, "spellings: %zu of %zu used%s%s\n", stats.spellings.size(),
                 o.gen.spellings.size(), unused.empty() ? "" : "; never used:", unused.c_str());
  }
  std::fprintf(stderr, "%s", EngineFusionsConsole(stats).c_str());
  // The lock file goes before the lock: a campaign starting now makes a new one (PrepareOut).
  fs::remove(layout.out + "/.lock", ec);
  ::close(lock_fd);
  if (!fatal.empty()) {
    std::fprintf(stderr,
                 "fusefuzz: error: %s\nfusefuzz: the campaign stopped: fusefuzz could not write "
                 "its output (this is not a finding)%s\n",
                 fatal.c_str(), summary_written ? "; the summary above covers the cases done" : "");
    return 2;
  }
  if (!summary_written) return 2;
  return stats.findings > 0 ? 1 : 0;
}

}  // namespace fusefuzz
