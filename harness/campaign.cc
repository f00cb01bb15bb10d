#include "harness/campaign.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "generators/generator.h"
#include "harness/blame.h"
#include "harness/campaign_summary.h"
#include "harness/finding_writer.h"
#include "harness/minimize.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "optimizer/pipeline.h"

namespace fusefuzz {
namespace {

using Clock = std::chrono::steady_clock;

// Set by SIGINT/SIGTERM; the only mutable global, as a signal handler needs one.
volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // parent gone: nothing more to report to
    off += static_cast<size_t>(n);
  }
}

// Builds the reproducer of a finding (blamed, then minimized when asked).
Repro MakeRepro(const CampaignOptions& o, Target& target, const GeneratedCase& c,
                const RefTensorMap& ref, const CaseOutcome& out, uint64_t seed, int64_t index) {
  Repro r;
  r.graph = c.graph;
  r.inputs = c.inputs;
  r.target = target.spec();
  r.opt = o.check.opt;
  r.opt.on_rewrite = nullptr;
  r.oracle = o.check.oracle;
  r.kernel_check = o.check.kernel_check;
  r.kind = out.kind;
  r.verdict = std::string(VerdictName(out.verdict));
  r.worst = out.oracle.worst;
  r.detail = out.run.status == RunStatus::kOk ? out.oracle.detail : out.run.message;
  r.target_log = out.run.log;
  r.has_seed = true;
  r.seed = seed;
  r.has_campaign_seed = true;
  r.campaign_seed = o.seed;
  r.case_index = index;
  r.generator = GenerationProvenance(seed, o.gen);
  if (out.kind == FindingKind::kFusion)
    r.blame = BlameFusion(target, c.graph, c.inputs, ref, o.check, out);
  return r;
}

struct WorkerLine {
  char tag;  // 'B' begin case, 'E' end case
  int64_t index = 0;
  std::string verdict, kind, signature;
  bool duplicate = false;
};

// Worker: cases index = first, first + stride, ... until a limit or a stop request.
[[noreturn]] void WorkerMain(const CampaignOptions& o, int64_t first, int stride, int fd,
                             Clock::time_point start) {
  signal(SIGINT, OnStop);
  signal(SIGTERM, OnStop);
  int code = 0;
  try {
    std::unique_ptr<Target> target = MakeTarget(o.target, o.target_settings);
    GenConfig gen = o.gen;
    const std::string findings = o.out_dir + "/findings";
    for (int64_t i = first;; i += stride) {
      if (g_stop) break;
      if (o.graphs > 0 && i >= o.graphs) break;
      if (o.seconds > 0 && Since(start) >= o.seconds) break;
      WriteAll(fd, "B " + std::to_string(i) + "\n");
      uint64_t seed = CaseSeed(o.seed, i);
      GeneratedCase c = GenerateFromSeed(seed, gen);
      RefTensorMap ref = RunReference(c.graph, c.inputs);
      CaseOutcome out = CheckCase(*target, c.graph, c.inputs, ref, o.check);
      std::string sig = "-";
      bool dup = false;
      if (out.finding()) {
        Repro r = MakeRepro(o, *target, c, ref, out, seed, i);
        sig = Signature(r);
        std::string dir = findings + "/" + sig;
        // mkdir is atomic and exclusive: the first worker to see a signature owns its folder.
        if (::mkdir(dir.c_str(), 0755) != 0) {
          dup = true;
        } else {
          if (o.minimize && (r.kind == FindingKind::kFusion || r.kind == FindingKind::kKernel)) {
            MinimizeOptions mo;
            mo.budget_seconds = o.minimize_budget;
            r = Minimize(r, *target, mo);
          }
          WriteFindingFolder(dir, r);
        }
      }
      std::ostringstream line;
      line << "E " << i << " " << VerdictName(out.verdict) << " "
           << (out.kind == FindingKind::kNone ? "-" : FindingKindName(out.kind)) << " " << sig
           << " " << (dup ? 1 : 0) << "\n";
      WriteAll(fd, line.str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusefuzz: worker error: %s\n", e.what());
    code = 3;
  }
  ::close(fd);
  std::fflush(nullptr);
  _exit(code);
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  int64_t next = 0;         // next case index this worker would take
  int64_t current = -1;     // case in progress (-1: none)
  Clock::time_point since;  // start of the current case
  bool done = false;
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
  BuildPipeline(o.check.opt);  // unknown rule/fault names fail here, before any case
  ValidateConfig(o.gen);
  {
    // Validate the target once (an external program must start and say hello) and restrict the
    // generator to the ops it supports.
    std::unique_ptr<Target> t = MakeTarget(o.target, o.target_settings);
    std::set<Op> allowed;
    for (Op op : o.gen.allowed_ops)
      if (t->caps().ops.count(op)) allowed.insert(op);
    if (allowed.empty()) throw InputError("--target", "the target supports none of the ops");
    o.gen.allowed_ops = allowed;
  }
  std::error_code mkdir_error;  // --out a/b/c: parents too (checked below)
  std::filesystem::create_directories(o.out_dir, mkdir_error);
  const std::string findings = o.out_dir + "/findings";
  ::mkdir(findings.c_str(), 0755);
  struct stat st;
  if (::stat(findings.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw InputError("--out", "cannot create folder '" + findings + "'");
  }

  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const Clock::time_point start = Clock::now();
  CampaignStats stats;
  stats.seed = o.seed;
  stats.command_line = o.command_line;
  stats.target = o.target;
  stats.inject = o.check.opt.inject;
  stats.oracle = std::string(OracleKindName(o.check.oracle.kind));
  std::vector<Worker> workers(static_cast<size_t>(o.jobs));

  auto spawn = [&](size_t w, int64_t first) {
    int fds[2];
    if (::pipe(fds) != 0) throw InputError("fuzz", std::string("pipe: ") + std::strerror(errno));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw InputError("fuzz", std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(fds[0]);
      for (size_t k = 0; k < workers.size(); ++k)
        if (workers[k].fd >= 0) ::close(workers[k].fd);
      WorkerMain(o, first, o.jobs, fds[1], start);
    }
    ::close(fds[1]);
    workers[w].pid = pid;
    workers[w].fd = fds[0];
    workers[w].buffer.clear();
    workers[w].next = first;
    workers[w].current = -1;
    workers[w].done = false;
  };
  for (size_t w = 0; w < workers.size(); ++w) spawn(w, static_cast<int64_t>(w));

  auto handle_line = [&](Worker& wk, const std::string& line) {
    std::istringstream is(line);
    char tag;
    is >> tag;
    if (tag == 'B') {
      is >> wk.current;
      wk.since = Clock::now();
      return;
    }
    int64_t index;
    std::string verdict, kind, sig;
    int dup = 0;
    is >> index >> verdict >> kind >> sig >> dup;
    wk.current = -1;
    wk.next = index + o.jobs;
    stats.AddCase(verdict, kind == "-" ? "" : kind, sig == "-" ? "" : sig, dup != 0, index,
                  Since(start));
  };

  // A worker died (or was killed for a stuck case): the case it was on becomes a finding written
  // here, from its seed, and the worker restarts after it.
  auto handle_death = [&](size_t w, int status, bool killed_for_timeout) {
    Worker& wk = workers[w];
    ::close(wk.fd);
    wk.fd = -1;
    wk.pid = -1;
    bool clean = !killed_for_timeout && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean) {
      wk.done = true;
      return;
    }
    // Killed between two cases (e.g. from outside, while it was reporting the last one): the
    // case it was about to take is the one charged, as the worker would have started it next.
    if (wk.current < 0 && (o.graphs <= 0 || wk.next < o.graphs)) wk.current = wk.next;
    ++stats.worker_errors;
    if (wk.current >= 0) {
      int64_t i = wk.current;
      uint64_t seed = CaseSeed(o.seed, i);
      Repro r;
      GeneratedCase c = GenerateFromSeed(seed, o.gen);
      r.graph = c.graph;
      r.inputs = c.inputs;
      r.target = o.target;
      r.opt = o.check.opt;
      r.opt.on_rewrite = nullptr;
      r.oracle = o.check.oracle;
      r.kernel_check = o.check.kernel_check;
      r.kind = killed_for_timeout ? FindingKind::kTimeout : FindingKind::kCrash;
      r.verdict = killed_for_timeout ? "TIMEOUT" : "CRASH";
      r.detail = killed_for_timeout ? "fusefuzz worker spent more than " +
                                          std::to_string(o.case_timeout) + " s on this case"
                 : WIFSIGNALED(status)
                     ? "fusefuzz worker killed by signal " + std::to_string(WTERMSIG(status))
                     : "fusefuzz worker failed (exit status " +
                           std::to_string(WEXITSTATUS(status)) +
                           "; its message is on stderr above)";
      r.has_seed = true;
      r.seed = seed;
      r.has_campaign_seed = true;
      r.campaign_seed = o.seed;
      r.case_index = i;
      r.generator = GenerationProvenance(seed, o.gen);
      std::string sig = Signature(r);
      std::string dir = findings + "/" + sig;
      bool dup = ::mkdir(dir.c_str(), 0755) != 0;
      if (!dup) WriteFindingFolder(dir, r);
      stats.AddCase(r.verdict, std::string(FindingKindName(r.kind)), sig, dup, i, Since(start));
      wk.next = i + o.jobs;
    }
    // Restart after the case, unless the campaign is over or workers keep dying (a target that
    // cannot even start must not be restarted forever).
    if (!g_stop && !(o.seconds > 0 && Since(start) >= o.seconds) &&
        !(o.graphs > 0 && wk.next >= o.graphs) && stats.worker_errors <= 16 * o.jobs) {
      spawn(w, wk.next);
    } else {
      wk.done = true;
    }
  };

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
      if (wk.pid > 0 && wk.current >= 0 && Since(wk.since) > o.case_timeout) {
        ::kill(wk.pid, SIGKILL);
        int status = 0;
        ::waitpid(wk.pid, &status, 0);
        handle_death(w, status, true);
      }
    }
    double t = Since(start);
    if (o.status && t - last_status >= 1.0) {
      last_status = t;
      std::fprintf(stderr, "%s\n", stats.StatusLine(t).c_str());
    }
  }
  stats.seconds = Since(start);
  stats.interrupted = g_stop != 0;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  WriteCampaignSummary(o.out_dir, stats, o.junit);
  std::fprintf(stderr, "%s", stats.SummaryText(o.out_dir).c_str());
  return stats.findings > 0 ? 1 : 0;
}

}  // namespace fusefuzz
