// Triage that holds up against real engines (docs/campaign.md, "Triage"): findings are signed
// from their minimized case, bucketed before minimization, matched against a --known baseline;
// an error only the optimized run hits is blamed and minimized keeping its error class.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;
using nlohmann::json;

json ReadJson(const fs::path& p) { return json::parse(std::ifstream(p)); }

std::string Example(const std::string& flags) {
  return std::string("'exec:") + FUSEFUZZ_EXAMPLE_TARGET + " " + flags + "'";
}

TEST(Triage, OptimizedRunErrorIsBlamedMinimizedAndKeepsItsClass) {
  fs::path dir = TempDir("opt-error");
  CmdResult r = Fusefuzz("fuzz --graphs 120 --seed 7 -j 2 -q --target " +
                         Example("--error-after-rule conv-bn-fold") + " --out " + dir.string());
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  // Every such error names another node, but it is one failure: one bucket, one folder.
  ASSERT_EQ(s["unique_findings"].size(), 1u) << s.dump(1);
  EXPECT_GT(s["unique_findings"][0]["count"].get<int>(), 5);
  json repro = ReadJson(dir / s["unique_findings"][0]["folder"].get<std::string>() / "repro.json");
  EXPECT_EQ(repro["finding"]["kind"], "target_error");
  EXPECT_EQ(repro["finding"]["failing_run"], "optimized");
  EXPECT_EQ(repro["finding"]["blame"]["rule"], "conv-bn-fold");
  EXPECT_EQ(repro["finding"]["blame"]["ablation"], "pass");
  // Minimized to the rule's pattern, still the same error.
  EXPECT_LE(repro["graph"]["nodes"].size(), 2u) << repro["graph"].dump();
  EXPECT_NE(repro["finding"]["detail"].get<std::string>().find("--error-after-rule"),
            std::string::npos);
  CmdResult replay = Fusefuzz(
      "replay --trust-target " +
      (dir / s["unique_findings"][0]["folder"].get<std::string>() / "repro.json").string());
  EXPECT_EQ(replay.status, 0) << replay.out;
  fs::remove_all(dir);
}

TEST(Triage, UnblamedFindingsAreSignedFromTheMinimizedCase) {
  // Without capabilities the target reports no rewrites and takes no bisect limit: nothing can
  // be blamed. Signed from the whole graph, every case would be its own finding; signed from
  // the minimized case, the fault's cases are one or two findings.
  fs::path dir = TempDir("unblamed");
  CmdResult r =
      Fusefuzz("fuzz --graphs 400 --seed 5 -j 2 -q --minimize-budget 120 --target " +
               Example("--no-capabilities --inject declaration-order") + " --out " + dir.string());
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  ASSERT_GE(s["findings"].get<int>(), 10) << s.dump(1);
  EXPECT_LE(s["unique_findings"].size(), 3u) << s.dump(1);
  // At most kMinimizedPerBucket cases of a bucket were minimized.
  std::map<std::string, int> slots;
  for (const auto& e : fs::directory_iterator(dir / ".buckets")) {
    const std::string name = e.path().filename().string();
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
      ++slots[name.substr(0, name.rfind('.', name.size() - 6))];
    }
  }
  ASSERT_FALSE(slots.empty());
  for (const auto& [bucket, n] : slots) EXPECT_LE(n, 3) << bucket;
  for (const auto& u : s["unique_findings"]) {
    json repro = ReadJson(dir / u["folder"].get<std::string>() / "repro.json");
    EXPECT_EQ(repro["finding"]["kind"], "fusion");
    EXPECT_LE(repro["graph"]["nodes"].size(), 6u) << repro["graph"].dump();
    EXPECT_FALSE(u["bucket"].get<std::string>().empty());
  }
  fs::remove_all(dir);
}

// The planted bugs that split over 3 to 6 folders black box before the minimizer brought their
// cases to one form (expose, fold-bn, fold-pad, canonical-ops): at most 2 folders per cause
// (the measurement: tests/planted_triage.sh).
TEST(Triage, OneCauseGivesAtMostTwoFoldersBlackBox) {
  for (const char* fault :
       {"multi-consumer", "activation-before-add", "relu6-unbounded", "bn-before-padded-conv"}) {
    fs::path dir = TempDir(std::string("one-form-") + fault);
    CmdResult r = Fusefuzz("fuzz --graphs 500 --seed 11 -j 2 -q --target " +
                           Example(std::string("--no-capabilities --inject ") + fault) + " --out " +
                           dir.string());
    ASSERT_EQ(r.status, 1) << fault << "\n" << r.out;
    json s = ReadJson(dir / "summary.json");
    EXPECT_GE(s["findings"].get<int>(), 5) << fault;
    EXPECT_LE(s["unique_findings"].size(), 2u) << fault << "\n" << s["unique_findings"].dump(1);
    fs::remove_all(dir);
  }
}

// ... without merging causes: two planted bugs on the same Conv -> BN chain, one campaign.
TEST(Triage, TwoCausesOnOneChainStayApart) {
  fs::path dir = TempDir("two-causes");
  CmdResult r = Fusefuzz("fuzz --graphs 300 --seed 11 -j 2 -q --target " +
                         Example("--no-capabilities --inject multi-consumer,relu6-unbounded") +
                         " --out " + dir.string());
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  std::set<std::string> patterns;
  for (const auto& u : s["unique_findings"]) {
    json repro = ReadJson(dir / u["folder"].get<std::string>() / "repro.json");
    std::string ops;
    for (const auto& n : repro["graph"]["nodes"]) ops += n["op"].get<std::string>() + ">";
    patterns.insert(ops);
  }
  EXPECT_TRUE(patterns.count("Conv>BatchNorm>")) << s["unique_findings"].dump(1);
  EXPECT_TRUE(patterns.count("Conv>Clip>")) << s["unique_findings"].dump(1);
  fs::remove_all(dir);
}

TEST(Triage, KnownBaselineCountsMatchesApart) {
  fs::path first = TempDir("baseline");
  CmdResult a = Fusefuzz("fuzz --graphs 300 --seed 5 -j 2 -q --inject declaration-order --out " +
                         first.string());
  ASSERT_EQ(a.status, 1) << a.out;
  json sa = ReadJson(first / "summary.json");
  const int found = sa["findings"].get<int>();
  ASSERT_GT(found, 0);

  // The same campaign against its own summary: everything is known, exit 0, no folders.
  fs::path again = TempDir("baseline-again");
  CmdResult b = Fusefuzz("fuzz --graphs 300 --seed 5 -j 2 -q --inject declaration-order --known " +
                         (first / "summary.json").string() + " --out " + again.string());
  EXPECT_EQ(b.status, 0) << b.out;
  json sb = ReadJson(again / "summary.json");
  EXPECT_EQ(sb["findings"], 0);
  EXPECT_EQ(sb["known"], found);
  EXPECT_EQ(sb["findings_by_kind"]["fusion"]["known"], found);
  EXPECT_TRUE(fs::is_empty(again / "findings"));

  // A text file of signatures works alike; another fault is still new.
  fs::path list = first / "known.txt";
  std::ofstream(list) << "# baseline\n"
                      << sa["unique_findings"][0]["signature"].get<std::string>() << "\n";
  fs::path third = TempDir("baseline-text");
  CmdResult c = Fusefuzz(
      "fuzz --graphs 300 --seed 5 -j 2 -q --inject declaration-order,bias-not-scaled --known " +
      list.string() + " --out " + third.string());
  EXPECT_EQ(c.status, 1) << c.out;
  json sc = ReadJson(third / "summary.json");
  EXPECT_GT(sc["known"].get<int>(), 0);
  EXPECT_GT(sc["findings"].get<int>(), 0);
  for (const auto& u : sc["unique_findings"]) {
    EXPECT_NE(u["signature"], sa["unique_findings"][0]["signature"]);
  }

  // A malformed baseline is an input error naming the file and line.
  std::ofstream(first / "bad.txt") << "ok-signature\nnot/a/signature\n";
  CmdResult d = Fusefuzz("fuzz --graphs 5 -q --known " + (first / "bad.txt").string() + " --out " +
                         (first / "unused").string());
  EXPECT_EQ(d.status, 2) << d.out;
  EXPECT_NE(d.out.find("bad.txt:2"), std::string::npos) << d.out;
  for (const fs::path& p : {first, again, third}) fs::remove_all(p);
}

TEST(Triage, UnsupportedReasonsAreSummarized) {
  fs::path dir = TempDir("unsupported");
  CmdResult r = Fusefuzz("fuzz --graphs 100 --seed 3 -q --target " + Example("--decline-over 4") +
                         " --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  json s = ReadJson(dir / "summary.json");
  const int declined = s["verdicts"]["UNSUPPORTED"].get<int>();
  ASSERT_GT(declined, 0) << s.dump(1);
  // Graphs of every size were declined for one reason: one class, particulars removed.
  ASSERT_EQ(s["unsupported_reasons"].size(), 1u) << s["unsupported_reasons"].dump();
  EXPECT_EQ(s["unsupported_reasons"].begin().value(), declined);
  EXPECT_NE(s["unsupported_reasons"].begin().key().find("--decline-over"), std::string::npos);
  std::string md;
  std::getline(std::ifstream(dir / "summary.md"), md, '\0');
  EXPECT_NE(md.find("Why the target declined graphs"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
