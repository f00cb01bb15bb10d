// Reliability of `fusefuzz fuzz` against hostile targets and a hostile environment (issue 11):
// names a target says never form paths or reach a shell, the output folder is locked, resumed
// or refused, a killed campaign leaves no process and no half-written finding, a full disk is
// fusefuzz's error and not a finding. Each test is named after the defect it pins.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::TempDir;
using nlohmann::json;

json ReadJson(const fs::path& p) { return json::parse(std::ifstream(p)); }

struct Outcome {
  int status = -1;
  std::string out;  // stdout + stderr
};

// Runs fusefuzz with exactly these arguments (no shell between), in `cwd` when given; `limit`
// > 0 caps the size of any file it writes (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with
// EFBIG, as on a full disk). Its output comes through a pipe, which the limit does not cap.
Outcome Fusefuzz(const std::vector<std::string>& args, const fs::path& cwd = {}, rlim_t limit = 0) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[1]);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    if (limit > 0) {
      signal(SIGXFSZ, SIG_IGN);
      rlimit lim{limit, limit};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    std::vector<std::string> copy = args;
    std::string bin = FUSEFUZZ_BINARY;
    std::vector<char*> argv{bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  Outcome r;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) r.out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string Example(const std::string& flags) {
  return std::string("exec:'") + FUSEFUZZ_EXAMPLE_TARGET + "' " + flags;
}

bool SafeName(const std::string& s) {
  return !s.empty() && s[0] != '.' && s.size() <= 100 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

// Every file under `root`, relative.
std::vector<std::string> Files(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    out.push_back(fs::relative(e.path(), root).string());
  }
  return out;
}

// A campaign whose target calls every rewrite `rule`: each signature's folder must exist and
// hold a reproducer with the real name; nothing may appear outside --out.
void ExpectFindingsKept(const std::string& rule, const std::string& name) {
  fs::path dir = TempDir(name);
  fs::path out = dir / "a" / "b" / "c" / "out";
  Outcome r = Fusefuzz({"fuzz", "--graphs", "40", "--seed", "3", "-q", "--no-minimize", "--target",
                        Example("--inject bias-not-scaled --rule-name '" + rule + "'"), "--out",
                        out.string()});
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(out / "summary.json");
  EXPECT_EQ(s["graphs"], 40) << "a forged worker line would change the count";
  ASSERT_GE(s["unique_findings"].size(), 1u);
  int64_t total = 0;
  for (const auto& u : s["unique_findings"]) {
    std::string sig = u["signature"];
    EXPECT_TRUE(SafeName(sig)) << sig;
    total += u["count"].get<int64_t>();
    fs::path repro = out / "findings" / sig / "repro.json";
    ASSERT_TRUE(fs::exists(repro)) << sig << "\n" << r.out;
    std::string blamed = ReadJson(repro)["finding"]["blame"]["rule"];
    EXPECT_TRUE(blamed == rule || blamed.empty()) << blamed;
  }
  EXPECT_EQ(total, s["findings"].get<int64_t>());
  EXPECT_GT(s["rule_fires"].value(rule, 0), 0) << s["rule_fires"].dump();
  // Nothing outside --out.
  for (const std::string& f : Files(dir)) {
    EXPECT_TRUE(f.rfind("a/b/c/out", 0) == 0 || std::string("a/b/c/out").rfind(f, 0) == 0) << f;
  }
  fs::remove_all(dir);
}

// §2.1: a target's rule name went unchecked into the folder name.
TEST(Robustness, RuleNameFromTargetCannotEscapeOut) {
  ExpectFindingsKept("<finding>/../../../ESCAPED", "escape");
}

// §2.3: "evil/../x" made the folder uncreatable, counted as a duplicate: all findings lost.
TEST(Robustness, RuleNameWithSlashKeepsItsFindings) { ExpectFindingsKept("evil/../x", "slash"); }

// §2.3: a space cut the signature on the worker->parent line.
TEST(Robustness, RuleNameWithSpaceKeepsItsSignature) { ExpectFindingsKept("a b c", "space"); }

// §2.3: a newline let the target forge worker->parent lines (400 graphs reported as 424).
// Since issue 44 item 7 a rewrite's rule name with a control character is a bad response (a
// target error): nothing forged, and the name never reaches a report's command line.
TEST(Robustness, RuleNameWithNewlineCannotForgeWorkerLines) {
  fs::path dir = TempDir("newline");
  Outcome r =
      Fusefuzz({"fuzz", "--graphs", "40", "--seed", "3", "-q", "--no-minimize", "--target",
                Example("--inject bias-not-scaled --rule-name 'x 0 0\nE 7 PASS - - 0\nE 8 MISMATCH "
                        "fusion forged 0'"),
                "--out", dir.string()});
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  EXPECT_EQ(s["graphs"], 40) << "a forged worker line would change the count";
  ASSERT_GE(s["unique_findings"].size(), 1u);
  for (const auto& u : s["unique_findings"]) {
    EXPECT_EQ(u["kind"], "target_error") << u.dump();
    json repro = ReadJson(dir / "findings" / u["signature"].get<std::string>() / "repro.json");
    EXPECT_NE(repro["finding"]["detail"].get<std::string>().find("holds a control character"),
              std::string::npos)
        << repro["finding"].dump();
  }
  fs::remove_all(dir);
}

// §2.3 (rule_fires): the optimized runs' rewrites are counted into summary.json.
TEST(Robustness, RuleFiresAreCountedIntoTheSummary) {
  fs::path dir = TempDir("fires");
  Outcome r = Fusefuzz(
      {"fuzz", "--graphs", "40", "--seed", "11", "-q", "--jobs", "2", "--out", dir.string()});
  ASSERT_EQ(r.status, 0) << r.out;
  json fires = ReadJson(dir / "summary.json")["rule_fires"];
  ASSERT_TRUE(fires.is_object()) << fires;
  int64_t total = 0;
  for (const auto& [rule, n] : fires.items()) total += n.get<int64_t>();
  EXPECT_GT(total, 0) << fires;
  fs::remove_all(dir);
}

// §2.2: the .dot -> .svg step ran a shell with the --out path in single quotes.
TEST(Robustness, QuoteInOutNeverReachesAShell) {
  fs::path dir = TempDir("quote");
  for (const std::string& name : {std::string("q';touch PWNED;'"), std::string("it's")}) {
    Outcome r = Fusefuzz({"fuzz", "--graphs", "20", "--seed", "3", "-q", "--no-minimize",
                          "--inject", "bias-not-scaled", "--out", name},
                         dir);
    ASSERT_EQ(r.status, 1) << r.out;
    EXPECT_FALSE(fs::exists(dir / "PWNED"));
    if (system("command -v dot >/dev/null 2>&1") != 0) continue;  // no Graphviz: no SVGs
    json s = ReadJson(dir / name / "summary.json");
    ASSERT_GE(s["unique_findings"].size(), 1u);
    for (const auto& u : s["unique_findings"]) {
      fs::path f = dir / name / "findings" / u["signature"].get<std::string>();
      EXPECT_GT(fs::file_size(f / "before.svg"), 0u) << name;
      EXPECT_GT(fs::file_size(f / "after.svg"), 0u) << name;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "PWNED"));
  fs::remove_all(dir);
}

// Children of `parent` (from /proc), alive (not zombies).
std::vector<pid_t> LiveChildren(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream st(e.path() / "stat");
    std::string line;
    std::getline(st, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream is(line.substr(close + 2));
    char state;
    pid_t ppid;
    is >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

bool Alive(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(st, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// §2.4: SIGKILL of the parent left orphan workers fuzzing on (and their targets).
TEST(Robustness, KilledParentTakesItsWorkersAndTargetsAlong) {
  fs::path dir = TempDir("orphans");
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::string bin = FUSEFUZZ_BINARY, target = Example(""), out = dir.string();
    std::vector<std::string> args = {bin,  "fuzz",     "--seconds", "120",   "--jobs", "2",
                                     "-q", "--target", target,      "--out", out};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  // Wait until both workers run and each has started its target.
  std::vector<pid_t> workers, targets;
  for (int i = 0; i < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    workers = LiveChildren(pid);
    targets.clear();
    for (pid_t w : workers)
      for (pid_t t : LiveChildren(w)) targets.push_back(t);
    if (workers.size() == 2 && targets.size() >= 2) break;
  }
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_GE(targets.size(), 2u);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  std::vector<pid_t> all = workers;
  all.insert(all.end(), targets.begin(), targets.end());
  // Death is asynchronous: wait (bounded) for it rather than for a fixed time.
  auto any_alive = [&] {
    for (pid_t p : all)
      if (Alive(p)) return true;
    return false;
  };
  for (int i = 0; i < 200 && any_alive(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t p : all) {
    EXPECT_FALSE(Alive(p)) << "pid " << p << " outlived the killed campaign";
    if (Alive(p)) kill(p, SIGKILL);
  }
  fs::remove_all(dir);
}

// §2.5: a folder left empty by a kill counted as a duplicate forever; a rerun overwrote the
// previous summary silently.
TEST(Robustness, RerunRefusesResumesOrStartsOver) {
  fs::path dir = TempDir("rerun");
  std::vector<std::string> base = {
      "fuzz",     "--seed",          "3",     "-q",        "--no-minimize",
      "--inject", "bias-not-scaled", "--out", dir.string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Outcome first = Fusefuzz(with({"--graphs", "30"}));
  ASSERT_EQ(first.status, 1) << first.out;
  json s1 = ReadJson(dir / "summary.json");
  EXPECT_FALSE(fs::exists(dir / ".tmp") && !fs::is_empty(dir / ".tmp"));
  // A kill mid-write in an older fusefuzz: an empty folder under the finding's name.
  std::string sig = s1["unique_findings"][0]["signature"];
  fs::remove_all(dir / "findings" / sig);
  fs::create_directories(dir / "findings" / sig);
  // A rerun into the same folder is refused and says why; nothing is touched.
  Outcome again = Fusefuzz(with({"--graphs", "30"}));
  EXPECT_EQ(again.status, 2) << again.out;
  EXPECT_NE(again.out.find("--resume"), std::string::npos) << again.out;
  EXPECT_EQ(ReadJson(dir / "summary.json"), s1);
  // --resume: cases 0..29 are skipped, 30..89 checked; counts add up; the empty folder is
  // refilled when its signature comes up again.
  Outcome resumed = Fusefuzz(with({"--graphs", "90", "--resume"}));
  ASSERT_EQ(resumed.status, 1) << resumed.out;
  json s2 = ReadJson(dir / "summary.json");
  EXPECT_EQ(s2["graphs"], 90);
  EXPECT_GE(s2["findings"].get<int64_t>(), s1["findings"].get<int64_t>());
  EXPECT_TRUE(fs::exists(dir / "findings" / sig / "repro.json")) << resumed.out;
  for (const auto& u : s2["unique_findings"]) {
    EXPECT_TRUE(fs::exists(dir / "findings" / u["signature"].get<std::string>() / "repro.json"));
  }
  // A one-shot campaign of 90 graphs finds the same counts.
  fs::path fresh = TempDir("rerun-fresh");
  std::vector<std::string> one = with({"--graphs", "90"});
  one[one.size() - 3] = fresh.string();  // --out
  ASSERT_EQ(Fusefuzz(one).status, 1);
  json s3 = ReadJson(fresh / "summary.json");
  EXPECT_EQ(s2["findings"], s3["findings"]);
  EXPECT_EQ(s2["verdicts"], s3["verdicts"]);
  // A different seed cannot resume this campaign.
  std::vector<std::string> other = with({"--graphs", "95", "--resume"});
  other[2] = "4";
  Outcome wrong = Fusefuzz(other);
  EXPECT_EQ(wrong.status, 2) << wrong.out;
  EXPECT_NE(wrong.out.find("seed"), std::string::npos) << wrong.out;
  // --force starts over.
  fs::create_directories(dir / "findings" / "stale-finding");
  Outcome forced = Fusefuzz(with({"--graphs", "10", "--force"}));
  EXPECT_LE(forced.status, 1) << forced.out;
  EXPECT_EQ(ReadJson(dir / "summary.json")["graphs"], 10);
  EXPECT_FALSE(fs::exists(dir / "findings" / "stale-finding"));
  fs::remove_all(dir);
  fs::remove_all(fresh);
}

// §2.6: two campaigns into the same --out merged silently.
TEST(Robustness, SecondCampaignOnTheSameOutIsRefusedNamingTheHolder) {
  fs::path dir = TempDir("lock");
  // Stand in for a running campaign: hold the lock as it does, with a PID inside.
  int fd = open((dir / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  std::string pid = std::to_string(getpid()) + "\n";
  ASSERT_EQ(write(fd, pid.data(), pid.size()), static_cast<ssize_t>(pid.size()));
  Outcome r = Fusefuzz({"fuzz", "--graphs", "5", "-q", "--out", dir.string()});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("PID " + std::to_string(getpid())), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "summary.json"));
  close(fd);
  Outcome after = Fusefuzz({"fuzz", "--graphs", "5", "-q", "--out", dir.string()});
  EXPECT_EQ(after.status, 0) << after.out;
  fs::remove_all(dir);
}

// Files that must never stay behind: temp files of atomic writes, a temp finding folder.
void ExpectNoPartialFiles(const fs::path& out) {
  for (const std::string& f : Files(out)) {
    if (f == ".tmp") continue;  // the (empty) folder for finding folders being written
    EXPECT_EQ(fs::path(f).filename().string().find(".tmp"), std::string::npos) << f;
  }
  if (fs::exists(out / ".tmp")) {
    EXPECT_TRUE(fs::is_empty(out / ".tmp"));
  }
  if (!fs::exists(out / "findings")) return;
  for (const auto& e : fs::directory_iterator(out / "findings")) {
    EXPECT_TRUE(fs::exists(e.path() / "repro.json")) << e.path();
    EXPECT_EQ(e.path().filename().string().find("crash-"), std::string::npos)
        << "a write error became a finding";
    for (const auto& f : fs::directory_iterator(e.path())) {
      EXPECT_GT(fs::file_size(f.path()), 0u) << f.path();
    }
  }
}

// §2.7: a full disk became a bogus, empty crash finding and no summary; with a little more
// space a 0-byte after.svg and a stray before.svg.tmp remained.
TEST(Robustness, FullDiskIsFusefuzzsErrorNotAFinding) {
  // 500 bytes: even the summary cannot be written; 3000: the summary can, the findings cannot.
  for (rlim_t limit : {rlim_t{500}, rlim_t{3000}}) {
    fs::path dir = TempDir("full-" + std::to_string(limit));
    Outcome r = Fusefuzz({"fuzz", "--graphs", "30", "--seed", "3", "-q", "--inject",
                          "bias-not-scaled", "--out", dir.string()},
                         {}, limit);
    EXPECT_EQ(r.status, 2) << "limit " << limit << ": " << r.out;
    EXPECT_NE(r.out.find("not a finding"), std::string::npos) << r.out;
    // Issue 44: the status line said "interrupted", which means Ctrl-C or SIGTERM.
    EXPECT_EQ(r.out.find("fuzz: interrupted"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fuzz: stopped (fusefuzz could not write its output)"), std::string::npos)
        << r.out;
    ExpectNoPartialFiles(dir);
    fs::remove_all(dir);
  }
}

// §1: a fresh clone had no out/fuzz; --out's parents must be created, errors give the reason.
TEST(Robustness, OutParentsAreCreatedAndErrorsSayWhy) {
  fs::path dir = TempDir("parents");
  Outcome r = Fusefuzz({"fuzz", "--graphs", "3", "-q", "--out", (dir / "x" / "y" / "z").string()});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "x" / "y" / "z" / "summary.json"));
  std::ofstream(dir / "file") << "not a folder";
  Outcome bad = Fusefuzz({"fuzz", "--graphs", "3", "-q", "--out", (dir / "file" / "sub").string()});
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("Not a directory"), std::string::npos) << bad.out;
  fs::remove_all(dir);
}

// §2.13: an unwritable --junit failed only after the whole campaign, and its 2 hid the 1.
TEST(Robustness, UnwritableJunitFailsBeforeTheCampaign) {
  fs::path dir = TempDir("junit");
  Outcome r =
      Fusefuzz({"fuzz", "--graphs", "30", "-q", "--inject", "bias-not-scaled", "--junit",
                (dir / "no" / "such" / "junit.xml").string(), "--out", (dir / "out").string()});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--junit"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json")) << "the campaign ran anyway";
  // A writable path is not left behind by the check when the campaign then fails.
  Outcome ok = Fusefuzz({"fuzz", "--graphs", "3", "-q", "--oracle", "magic", "--junit",
                         (dir / "j.xml").string(), "--out", (dir / "out2").string()});
  EXPECT_EQ(ok.status, 2);
  EXPECT_FALSE(fs::exists(dir / "j.xml"));
  fs::remove_all(dir);
}

// §2.8: `run -o` replaced a symlink with a file, and as root `-o /dev/full` returned 0 and
// replaced the device node.
TEST(Robustness, RunOutputWritesThroughSymlinksAndReportsDeviceErrors) {
  fs::path dir = TempDir("output");
  std::string graph = std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/op-conv.json";
  fs::create_symlink("real.json", dir / "link.json");
  Outcome r = Fusefuzz({"run", graph, "-o", (dir / "link.json").string()});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_GT(fs::file_size(dir / "real.json"), 0u);
  // A private /dev/full (a regression must not replace the machine's own).
  fs::path full = dir / "full";
  if (mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) {
    Outcome r_full = Fusefuzz({"run", graph, "-o", full.string()});
    EXPECT_EQ(r_full.status, 2) << r_full.out;
    EXPECT_NE(r_full.out.find(std::strerror(ENOSPC)), std::string::npos) << r_full.out;
    EXPECT_TRUE(fs::is_character_file(full));
  }
  fs::remove_all(dir);
}

}  // namespace
