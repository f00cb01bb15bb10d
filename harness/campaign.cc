#include "harness/campaign.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "generators/coverage.h"
#include "generators/generator.h"
#include "harness/blame.h"
#include "harness/campaign_summary.h"
#include "harness/finding_filing.h"
#include "harness/finding_writer.h"
#include "harness/minimize.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "optimizer/pipeline.h"
#include "optimizer/registry.h"

namespace fusefuzz {
namespace {

using Clock = std::chrono::steady_clock;

// Set by SIGINT/SIGTERM; the only mutable global, as a signal handler needs one.
volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

namespace fs = std::filesystem;
using nlohmann::json;

// One message to the parent: one JSON object per line, so nothing a target says (rule names
// with spaces or newlines) can cut a field or forge a line. False when the parent is gone.
bool Send(int fd, const json& message) {
  std::string s = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the parent is gone
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// Cases a resumed campaign has already checked (CampaignStats::progress_*).
struct Progress {
  int jobs = 0;
  std::vector<int64_t> next;
  bool Checked(int64_t i) const { return jobs > 0 && i < next[static_cast<size_t>(i % jobs)]; }
};

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
  const bool optimized_failure = IsOptimizedRunFailure(out, o.check);
  switch (out.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      if (o.check.kernel_check) r.failing_run = out.optimized ? "optimized" : "unoptimized";
      break;
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
      break;
  }
  // An error only the optimized run hits is blamed like a mismatch: which rewrite causes it.
  if (out.kind == FindingKind::kFusion || optimized_failure)
    r.blame = BlameFusion(target, c.graph, c.inputs, ref, o.check, out);
  return r;
}

// Worker: cases index = first, first + stride, ... until a limit or a stop request. Messages to
// the parent on `fd`: {"begin": i}; {"end": i, "verdict", "kind", "signature", "bucket",
// "known", "duplicate", "reason" (of an UNSUPPORTED), "rewrites": {rule: count}}; {"fatal":
// message} when fusefuzz cannot write its output (the worker then exits with status 2: that is the
// harness's error, never a finding).
[[noreturn]] void WorkerMain(const CampaignOptions& o, int64_t first, int stride, int fd,
                             Clock::time_point start, pid_t parent, const Progress& done) {
  // Die with the parent: a SIGKILLed campaign must not leave workers fuzzing on. The parent may
  // already be gone before prctl took effect: then getppid() is no longer it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(0);
  signal(SIGINT, OnStop);
  signal(SIGTERM, OnStop);
  int code = 0;
  try {
    std::unique_ptr<Target> target = MakeTarget(o.target, o.target_settings);
    GenConfig gen = o.gen;
    const OutLayout layout(o.out_dir);
    FilingOptions filing;
    filing.minimize = o.minimize;
    filing.minimize_budget = o.minimize_budget;
    filing.sensitivity_check = o.sensitivity_check && o.check.kernel_check;
    filing.known = o.known;
    for (int64_t i = first;; i += stride) {
      if (g_stop) break;
      if (o.graphs > 0 && i >= o.graphs) break;
      if (o.seconds > 0 && Since(start) >= o.seconds) break;
      if (done.Checked(i)) continue;
      if (!Send(fd, {{"begin", i}})) break;
      uint64_t seed = CaseSeed(o.seed, i);
      GeneratedCase c = GenerateFromSeed(seed, gen);
      RefTensorMap ref = RunReference(c.graph, c.inputs);
      CaseOutcome out = CheckCase(*target, c.graph, c.inputs, ref, o.check);
      json end = {{"end", i},          {"verdict", VerdictName(out.verdict)},
                  {"kind", nullptr},   {"signature", nullptr},
                  {"bucket", nullptr}, {"known", false},
                  {"duplicate", false}};
      if (out.verdict == Verdict::kUnsupported) end["reason"] = ErrorClass(out.run.message);
      if (out.finding()) {
        Repro r = MakeRepro(o, *target, c, ref, out, seed, i);
        std::vector<std::string> fired;
        if (out.optimized) {
          for (const Rewrite& rw : out.run.rewrites) fired.push_back(rw.rule);
        }
        Filed f = FileFinding(layout, filing, *target, std::move(r), fired, seed);
        end["kind"] = f.kind;
        if (!f.signature.empty()) end["signature"] = f.signature;
        end["bucket"] = f.bucket;
        end["known"] = f.known;
        end["duplicate"] = f.duplicate;
      }
      json fires = json::object();
      if (out.optimized) {
        for (const Rewrite& rw : out.run.rewrites) {
          fires[rw.rule] = fires.value(rw.rule, int64_t{0}) + 1;
        }
      }
      end["rewrites"] = std::move(fires);
      end["coverage"] = ClassifyGraph(c.graph);
      if (!Send(fd, end)) break;
    }
  } catch (const OutputError& e) {
    Send(fd, {{"fatal", e.what()}});
    code = 2;
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

namespace {

// Fails now, not after the campaign, when the JUnit file cannot be written (its exit status 2
// would hide the campaign's 1). A file created only for the check is removed again.
void CheckWritable(const std::string& path) {
  struct stat st {};
  bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) throw InputError("--junit", ErrnoText("cannot write '" + path + "'"));
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
}

// Locks OUT for this process (flock on OUT/.lock, which holds our PID); the lock goes with the
// process, so a killed campaign leaves none behind. Returns the descriptor to keep open.
int LockOut(const std::string& out) {
  const std::string path = out + "/.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError("--out", ErrnoText("cannot create the lock file '" + path + "'"));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (holder.empty() || holder.find_first_not_of("0123456789") != std::string::npos)
      holder = "unknown";
    if (err == EWOULDBLOCK) {
      throw InputError("--out", "'" + out + "' is in use by another campaign (PID " + holder +
                                    ", lock file " + path + ")");
    }
    throw InputError("--out", "cannot lock '" + path + "': " + std::strerror(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    std::fprintf(stderr, "fusefuzz: warning: cannot write the PID into %s: %s\n", path.c_str(),
                 std::strerror(errno));
  }
  return fd;
}

// Loads the summary of the campaign being resumed into `stats` and returns its progress.
Progress LoadForResume(const std::string& path, const CampaignOptions& o, CampaignStats* stats) {
  json j = ReadJsonFile(path);
  auto bad = [&](const std::string& why) {
    return InputError(path, "cannot resume from this summary: " + why);
  };
  Progress p;
  try {
    if (!j.is_object() || j.value("format", "") != "fusefuzz-summary")
      throw bad("not a fusefuzz-summary file");
    if (j.at("seed").get<uint64_t>() != o.seed) {
      throw bad("it was made with --seed " + j.at("seed").dump() + ", not " +
                std::to_string(o.seed) + " (give that seed, or --force to start over)");
    }
    if (j.at("target").get<std::string>() != o.target) {
      throw bad("it was made with --target " + j.at("target").dump() +
                " (give that target, or --force to start over)");
    }
    if (j.at("inject").get<std::vector<std::string>>() != o.check.opt.inject) {
      throw bad("it was made with --inject " + j.at("inject").dump() +
                " (give the same faults, or --force to start over)");
    }
    stats->graphs = j.at("graphs").get<int64_t>();
    stats->findings = j.at("findings").get<int64_t>();
    stats->known = j.value("known", int64_t{0});
    if (auto k = j.find("findings_by_kind"); k != j.end()) {
      for (const auto& [kind, v] : k->items()) {
        stats->by_kind[kind].count = v.at("cases").get<int64_t>();
        stats->by_kind[kind].known = v.at("known").get<int64_t>();
      }
    }
    stats->unsupported_reasons = j.value("unsupported_reasons", std::map<std::string, int64_t>{});
    stats->worker_errors = j.value("worker_errors", int64_t{0});
    stats->seconds = j.at("seconds").get<double>();
    stats->verdicts = j.at("verdicts").get<std::map<std::string, int64_t>>();
    stats->rule_fires = j.value("rule_fires", std::map<std::string, int64_t>{});
    if (auto cov = j.find("coverage"); cov != j.end()) {
      stats->coverage.graphs = cov->at("graphs").get<int64_t>();
      for (const json& c : cov->at("classes")) {
        const std::string id = c.at("id").get<std::string>();
        stats->coverage.occurrences[id] = c.at("count").get<int64_t>();
        stats->coverage.graphs_with[id] = c.at("graphs").get<int64_t>();
      }
    }
    if (auto f = j.find("first_finding"); f != j.end()) {
      stats->first_finding_graphs = f->at("graphs").get<int64_t>();
      stats->first_finding_seconds = f->at("seconds").get<double>();
    }
    for (const json& u : j.at("unique_findings")) {
      std::string sig = u.at("signature").get<std::string>();
      // Signatures name folders: only what Signature() itself produces is accepted.
      if (!LooksLikeSignature(sig)) {
        throw bad("/unique_findings: " + json(sig).dump() + " is not a signature");
      }
      SignatureStats& s = stats->unique[sig];
      s.kind = u.at("kind").get<std::string>();
      s.count = u.at("count").get<int64_t>();
      s.first_case = u.at("first_case").get<int64_t>();
      s.bucket = u.value("bucket", "");
    }
    if (auto pr = j.find("progress"); pr != j.end()) {
      p.jobs = pr->at("jobs").get<int>();
      p.next = pr->at("next").get<std::vector<int64_t>>();
      if (p.jobs < 1 || p.next.size() != static_cast<size_t>(p.jobs))
        throw bad("/progress: \"next\" must hold one entry per job");
    }
  } catch (const json::exception& e) {
    throw bad(std::string("unexpected content (") + e.what() + ")");
  }
  return p;
}

// Creates OUT, locks it, and handles what a previous campaign left there (refuse, --resume or
// --force). Returns the lock descriptor; fills `stats`/`done` when resuming.
int PrepareOut(const CampaignOptions& o, CampaignStats* stats, Progress* done) {
  const OutLayout l(o.out_dir);
  std::error_code ec;
  fs::create_directories(l.out, ec);
  if (ec) {
    throw InputError("--out", "cannot create folder '" + l.out + "': " + ec.message());
  }
  int lock = LockOut(l.out);
  try {
    bool empty = true;
    for (const auto& e : fs::directory_iterator(l.out, ec)) {
      if (e.path().filename() != ".lock") empty = false;
    }
    if (ec) throw InputError("--out", "cannot list '" + l.out + "': " + ec.message());
    if (!empty && !o.resume && !o.force) {
      throw InputError("--out", "'" + l.out +
                                    "' is not empty (a previous campaign?): give --resume to "
                                    "continue it, --force to delete its findings and summary "
                                    "and start over, or another folder");
    }
    if (o.force) {
      // Only what a campaign writes: --out may be a folder that holds other things too.
      for (const std::string& p : {l.findings, l.claims, l.buckets, l.tmp, l.out + "/summary.json",
                                   l.out + "/summary.md"}) {
        fs::remove_all(p, ec);
        if (ec) throw InputError("--force", "cannot remove '" + p + "': " + ec.message());
      }
    }
    if (o.resume && fs::exists(l.out + "/summary.json")) {
      *done = LoadForResume(l.out + "/summary.json", o, stats);
    }
    // Temp folders of writers killed mid-finding: nobody else can be writing, we hold the lock.
    fs::remove_all(l.tmp, ec);
    for (const std::string& d : {l.findings, l.claims, l.buckets, l.tmp}) {
      fs::create_directories(d, ec);
      if (ec) throw InputError("--out", "cannot create folder '" + d + "': " + ec.message());
    }
  } catch (...) {
    ::close(lock);
    throw;
  }
  return lock;
}

}  // namespace

int RunCampaign(const CampaignOptions& in) {
  CampaignOptions o = in;
  if (o.seconds <= 0 && o.graphs <= 0) throw InputError("fuzz", "give --seconds or --graphs");
  if (o.jobs < 1) throw InputError("--jobs", "must be >= 1");
  if (o.resume && o.force) throw InputError("--resume", "cannot be combined with --force");
  if (o.target == "embedded") {
    BuildPipeline(o.check.opt);  // unknown rule/fault names fail here, before any case
  } else {
    // An external target's rules have its own names (--disable Pad_Fusion): passed through as
    // given, as blame reports them. Faults are fusefuzz's catalogue whatever the target.
    for (size_t i = 0; i < o.check.opt.inject.size(); ++i) {
      if (!FindFault(o.check.opt.inject[i])) {
        throw InputError("--inject",
                         "unknown fault '" + o.check.opt.inject[i] + "' (fusefuzz list faults)");
      }
    }
  }
  ValidateConfig(o.gen);
  if (!o.junit.empty()) CheckWritable(o.junit);
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
  CampaignStats stats;
  Progress done;
  const int lock_fd = PrepareOut(o, &stats, &done);
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
  stats.command_line = o.command_line;
  stats.target = o.target;
  stats.inject = o.check.opt.inject;
  stats.oracle = std::string(OracleKindName(o.check.oracle.kind));
  std::vector<Worker> workers(static_cast<size_t>(o.jobs));
  const pid_t self = ::getpid();
  std::string fatal;  // fusefuzz could not write its output: stop, exit 2

  auto skip_done = [&](int64_t i) {
    while (done.Checked(i)) i += o.jobs;
    return i;
  };
  auto spawn = [&](size_t w, int64_t first) {
    int fds[2];
    if (::pipe(fds) != 0) throw InputError("fuzz", ErrnoText("pipe"));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw InputError("fuzz", ErrnoText("fork"));
    if (pid == 0) {
      ::close(fds[0]);
      for (size_t k = 0; k < workers.size(); ++k)
        if (workers[k].fd >= 0) ::close(workers[k].fd);
      WorkerMain(o, first, o.jobs, fds[1], start, self, done);
    }
    ::close(fds[1]);
    workers[w].pid = pid;
    workers[w].fd = fds[0];
    workers[w].buffer.clear();
    workers[w].next = skip_done(first);
    workers[w].current = -1;
    workers[w].done = false;
    workers[w].fatal = false;
  };
  auto stop_all = [&](const std::string& why) {
    if (fatal.empty()) fatal = why;
    for (auto& wk : workers)
      if (wk.pid > 0) ::kill(wk.pid, SIGTERM);  // they stop after their current case
  };
  for (size_t w = 0; w < workers.size(); ++w) spawn(w, static_cast<int64_t>(w));

  // Bucket -> the first filed case of it (kind, signature); duplicates waiting for one.
  std::map<std::string, CaseReport> resolved;
  std::map<std::string, std::vector<CaseReport>> pending;
  auto handle_line = [&](Worker& wk, const std::string& line) {
    json m = json::parse(line, nullptr, false);
    try {
      if (!m.is_object()) throw std::runtime_error("not a JSON object");
      if (m.contains("begin")) {
        wk.current = m["begin"].get<int64_t>();
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
        c.index = index;
        c.seconds = previous_seconds + Since(start);
        if (const json& kind = m.at("kind"); !kind.is_null()) c.kind = kind.get<std::string>();
        if (auto sig = m.find("signature"); sig != m.end() && !sig->is_null())
          c.signature = sig->get<std::string>();
        if (auto b = m.find("bucket"); b != m.end() && !b->is_null())
          c.bucket = b->get<std::string>();
        c.duplicate = m.at("duplicate").get<bool>();
        c.known = m.value("known", false);
        c.unsupported_reason = m.value("reason", "");
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
        for (const auto& [rule, n] : m.at("rewrites").items()) {
          stats.rule_fires[rule] += n.get<int64_t>();
        }
        stats.coverage.Add(m.at("coverage").get<std::map<std::string, int64_t>>());
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
      try {
        bool fresh = PublishFinding(layout, sig, r);
        CaseReport c;
        c.verdict = r.verdict;
        c.kind = std::string(FindingKindName(r.kind));
        c.signature = c.bucket = sig;
        c.duplicate = !fresh;
        c.index = i;
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
      std::fprintf(stderr, "%s\n", stats.StatusLine(previous_seconds + t).c_str());
    }
  }
  // Duplicates of buckets whose slot holders never finished (killed mid-minimization): counted
  // under the bucket key, which names no folder.
  for (auto& [bucket, cases] : pending) {
    for (CaseReport& c : cases) {
      c.signature = bucket;
      stats.AddCase(c);
    }
  }
  stats.seconds = previous_seconds + Since(start);
  stats.interrupted = g_stop != 0 || !fatal.empty();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  // Where a --resume continues: per worker, the first case it has not finished (with the same
  // --jobs the previous campaign's progress merges exactly; see docs/campaign.md).
  stats.progress_jobs = o.jobs;
  stats.progress_next.assign(static_cast<size_t>(o.jobs), 0);
  for (size_t w = 0; w < workers.size(); ++w) {
    int64_t next = workers[w].next;
    if (done.jobs == o.jobs) next = std::max(next, done.next[w]);
    stats.progress_next[w] = next;
  }
  std::error_code ec;
  fs::remove_all(layout.tmp, ec);  // left by a worker killed mid-finding
  fs::create_directories(layout.tmp, ec);
  bool summary_written = true;
  try {
    WriteCampaignSummary(o.out_dir, stats, o.junit);
  } catch (const OutputError& e) {
    summary_written = false;
    std::fprintf(stderr, "fusefuzz: error: could not write the summary: %s\n", e.what());
  }
  std::fprintf(stderr, "%s", stats.SummaryText(o.out_dir).c_str());
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
