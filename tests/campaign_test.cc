// End-to-end tests of `fusefuzz fuzz` and `fusefuzz replay`: exit statuses, the output folder,
// blame, dedup across workers, Ctrl-C, a worker killed mid-campaign.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;
using nlohmann::json;

json ReadJson(const fs::path& p) { return json::parse(std::ifstream(p)); }

std::string ReadText(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::set<std::string> Signatures(const json& summary) {
  std::set<std::string> s;
  for (const auto& u : summary["unique_findings"]) s.insert(u["signature"].get<std::string>());
  return s;
}

// A fault whose rule never matches the chosen generator's graphs is refused before the
// campaign, naming what turns it on (issue 45, item 10: it ran 200 float graphs, exit 0).
TEST(Campaign, AFaultThatCannotFireIsRefused) {
  fs::path dir = TempDir("cannot-fire");
  CmdResult r =
      Fusefuzz("fuzz --graphs 20 -q --inject relu-zero-point-ignored --out " + dir.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--inject relu-zero-point-ignored"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("never fired in the first 200 graphs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("add --quant"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "summary.json"));
  fs::remove_all(dir);
}

TEST(Campaign, NoFaultsNoFindings) {
  fs::path dir = TempDir("clean");
  CmdResult r = Fusefuzz("fuzz --graphs 300 --seed 11 -q --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  json s = ReadJson(dir / "summary.json");
  EXPECT_EQ(s["graphs"], 300);
  EXPECT_EQ(s["findings"], 0);
  EXPECT_GT(s["verdicts"]["PASS"].get<int>(), 250);
  EXPECT_TRUE(fs::exists(dir / "summary.md"));
  // A finished campaign leaves no working files (issue 45, item 16).
  EXPECT_FALSE(fs::exists(dir / ".lock"));
  EXPECT_FALSE(fs::exists(dir / ".tmp"));
  fs::remove_all(dir);
}

// The value-dependent coverage classes reach the summary: the workers classify each quantized
// case on the reference's values too, not only its structure.
TEST(Campaign, QuantCampaignCountsSaturatedCoverage) {
  fs::path dir = TempDir("quant-coverage");
  CmdResult r = Fusefuzz("fuzz --quant --graphs 150 --seed 1 -q --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  json s = ReadJson(dir / "summary.json");
  int64_t saturated = -1;
  for (const auto& c : s["coverage"]["classes"]) {
    if (c["id"] == "quant/saturated") saturated = c["graphs"].get<int64_t>();
  }
  EXPECT_GT(saturated, 0) << s["coverage"].dump();
  // How close the passing cases came to their admitted error, on the grid and in float.
  for (const char* key : {"grid", "float"}) {
    ASSERT_TRUE(s["closest_pass"].contains(key)) << s["closest_pass"].dump();
    const double share = s["closest_pass"][key]["share"].get<double>();
    EXPECT_GT(share, 0) << key;
    EXPECT_LE(share, 1) << key;
    EXPECT_LT(s["closest_pass"][key]["case"].get<int64_t>(), 150) << key;
  }
  EXPECT_NE(ReadText(dir / "summary.md").find("## Closest passing case"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Campaign, InjectedFaultIsFoundBlamedAndReplayed) {
  fs::path dir = TempDir("fault");
  std::string junit = (dir / "junit.xml").string();
  CmdResult r =
      Fusefuzz("fuzz --graphs 60 --seed 3 -q --no-minimize --inject bias-not-scaled --junit " +
               junit + " --out " + dir.string());
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  ASSERT_GE(s["unique_findings"].size(), 1u);
  EXPECT_GE(s["findings"].get<int>(), 1);
  std::string folder = s["unique_findings"][0]["folder"];
  fs::path f = dir / folder;
  for (const char* file : {"repro.json", "report.md", "before.dot", "after.dot"}) {
    EXPECT_TRUE(fs::exists(f / file)) << file;
  }
  json repro = ReadJson(f / "repro.json");
  EXPECT_EQ(repro["format"], "fusefuzz-repro");
  EXPECT_EQ(repro["finding"]["kind"], "fusion");
  EXPECT_EQ(repro["finding"]["blame"]["rule"], "bias-not-scaled");
  EXPECT_EQ(repro["finding"]["blame"]["method"], "bisect");
  EXPECT_EQ(repro["finding"]["blame"]["ablation"], "pass");
  EXPECT_GE(repro["finding"]["blame"]["rewrite_index"].get<int>(), 1);
  EXPECT_EQ(repro["target"]["options"]["inject"][0], "bias-not-scaled");
  std::string report;
  std::getline(std::ifstream(f / "report.md"), report, '\0');
  EXPECT_NE(report.find("BISECT: applying rewrite"), std::string::npos);
  std::string xml;
  std::getline(std::ifstream(junit), xml, '\0');
  EXPECT_NE(xml.find("<failure"), std::string::npos);

  // The same case replays anywhere: still fails with the fault, passes without it.
  CmdResult again = Fusefuzz("replay " + (f / "repro.json").string());
  EXPECT_EQ(again.status, 0) << again.out;
  CmdResult without =
      Fusefuzz("replay " + (f / "repro.json").string() + " --without-faults --expect pass");
  EXPECT_EQ(without.status, 0) << without.out;
  CmdResult wrong = Fusefuzz("replay " + (f / "repro.json").string() + " --expect pass");
  EXPECT_EQ(wrong.status, 1) << wrong.out;
  CmdResult folder_replay = Fusefuzz("replay " + (dir / "findings").string());
  EXPECT_EQ(folder_replay.status, 0) << folder_replay.out;
  // gen --case reproduces the exact graph of the finding's case.
  CmdResult gen = Fusefuzz("gen --seed 3 --case " + repro["provenance"]["case_index"].dump());
  ASSERT_EQ(gen.status, 0);
  json g = json::parse(gen.out);
  g.erase("provenance");
  json recorded = repro["graph"];
  EXPECT_EQ(g["nodes"].size(), recorded["nodes"].size());
  fs::remove_all(dir);
}

TEST(Campaign, WorkersFindTheSameSignatures) {
  fs::path one = TempDir("j1"), two = TempDir("j2");
  std::string common =
      " --graphs 120 --seed 5 -q --no-minimize --inject multi-consumer,eps-dropped";
  CmdResult a = Fusefuzz("fuzz --jobs 1 --out " + one.string() + common);
  CmdResult b = Fusefuzz("fuzz --jobs 2 --out " + two.string() + common);
  ASSERT_EQ(a.status, 1) << a.out;
  ASSERT_EQ(b.status, 1) << b.out;
  json sa = ReadJson(one / "summary.json"), sb = ReadJson(two / "summary.json");
  EXPECT_EQ(sa["graphs"], 120);
  EXPECT_EQ(sb["graphs"], 120);
  EXPECT_EQ(sa["findings"], sb["findings"]);
  EXPECT_EQ(Signatures(sa), Signatures(sb));
  EXPECT_GE(Signatures(sa).size(), 2u);
  fs::remove_all(one);
  fs::remove_all(two);
}

TEST(Campaign, UsageErrors) {
  EXPECT_EQ(Fusefuzz("fuzz --graphs 5 --inject no-such-fault -q --out /tmp/ff-unused").status, 2);
  EXPECT_EQ(Fusefuzz("fuzz --graphs 5 --target frob -q --out /tmp/ff-unused").status, 2);
  EXPECT_EQ(Fusefuzz("fuzz --graphs 5 --oracle magic").status, 2);
  EXPECT_EQ(Fusefuzz("replay /nonexistent/repro.json").status, 2);
  fs::remove_all("/tmp/ff-unused");
}

// Starts `fusefuzz args...` in the background; returns its pid.
pid_t Spawn(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = FUSEFUZZ_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
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
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

int WaitExit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(Campaign, CtrlCWritesTheSummary) {
  fs::path dir = TempDir("sigint");
  pid_t pid = Spawn({"fuzz", "--seconds", "120", "--seed", "2", "--out", dir.string()});
  for (int i = 0; i < 100 && !fs::exists(dir / "findings"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  EXPECT_EQ(WaitExit(pid), 0);
  json s = ReadJson(dir / "summary.json");
  EXPECT_TRUE(s["interrupted"].get<bool>());
  EXPECT_GT(s["graphs"].get<int>(), 0);
  EXPECT_LT(s["seconds"].get<double>(), 60.0);
  fs::remove_all(dir);
}

TEST(Campaign, KilledWorkerBecomesACrashFindingAndIsRestarted) {
  fs::path dir = TempDir("kill");
  pid_t pid =
      Spawn({"fuzz", "--seconds", "6", "--jobs", "2", "--seed", "4", "--out", dir.string()});
  std::vector<pid_t> kids;
  for (int i = 0; i < 100 && kids.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kids = ChildrenOf(pid);
  }
  ASSERT_FALSE(kids.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  kill(kids[0], SIGKILL);
  EXPECT_EQ(WaitExit(pid), 1);  // the killed case is a finding
  json s = ReadJson(dir / "summary.json");
  bool crash = false;
  for (const auto& u : s["unique_findings"]) crash |= u["kind"] == "crash";
  EXPECT_TRUE(crash) << s.dump(1);
  EXPECT_GT(s["graphs"].get<int>(), 1);
  // The crash finding holds a readable reproducer regenerated from the case's seed.
  for (const auto& u : s["unique_findings"]) {
    if (u["kind"] != "crash") continue;
    json repro = ReadJson(dir / u["folder"].get<std::string>() / "repro.json");
    EXPECT_EQ(repro["finding"]["verdict"], "CRASH");
    EXPECT_TRUE(repro["provenance"].contains("seed"));
  }
  fs::remove_all(dir);
}

}  // namespace
