// `fusefuzz fuzz --batch`: several cases per target call give the same cases and the same
// findings as one per call, and a fault that only shows when cases share a call is batch-only,
// never a finding (docs/campaign.md, "Several cases per target call").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;
using nlohmann::json;

json ReadJson(const fs::path& p) { return json::parse(std::ifstream(p)); }

// Folder name -> its repro.json, without the replay command (it names OUT).
std::map<std::string, json> Findings(const fs::path& out) {
  std::map<std::string, json> found;
  if (!fs::exists(out / "findings")) return found;
  for (const auto& e : fs::directory_iterator(out / "findings")) {
    json r = ReadJson(e.path() / "repro.json");
    r.erase("command");  // names the folder's path
    found[e.path().filename().string()] = r;
  }
  return found;
}

std::string Example(const std::string& flags) {
  return std::string("'exec:") + FUSEFUZZ_EXAMPLE_TARGET + " " + flags + "'";
}

// One worker: with two, which case of a signature files its folder first is a race, batch or not.
TEST(BatchCampaign, SameFindingsWithBatch1AndBatch8) {
  std::map<int, std::map<std::string, json>> by_batch;
  std::map<int, json> summaries;
  for (int batch : {1, 8}) {
    fs::path dir = TempDir("batch-determinism-" + std::to_string(batch));
    CmdResult r = Fusefuzz(
        "fuzz --graphs 48 --seed 5 -j 1 -q --no-minimize --batch " + std::to_string(batch) +
        " --target " + Example("--batch 4 --inject through-activation") + " --out " + dir.string());
    ASSERT_EQ(r.status, 1) << r.out;  // findings
    by_batch[batch] = Findings(dir);
    summaries[batch] = ReadJson(dir / "summary.json");
    fs::remove_all(dir);
  }
  ASSERT_FALSE(by_batch[1].empty());
  ASSERT_EQ(by_batch[1].size(), by_batch[8].size());
  for (const auto& [name, repro] : by_batch[1]) {
    ASSERT_TRUE(by_batch[8].count(name)) << name;
    EXPECT_EQ(repro, by_batch[8][name]) << name;
  }
  EXPECT_EQ(summaries[1]["verdicts"], summaries[8]["verdicts"]);
  EXPECT_EQ(summaries[1]["findings"], summaries[8]["findings"]);
  EXPECT_FALSE(summaries[1].contains("batches"));
  EXPECT_EQ(summaries[8]["batches"]["batched"], 48);
  EXPECT_EQ(summaries[8]["batches"]["batch_only"], 0);
}

// The example target adds 1 to the first output of a graph joining two cases: the first case
// of every batch fails there, passes alone, and is batch-only; the campaign has no finding.
TEST(BatchCampaign, AFaultOnlyInTheBatchIsBatchOnly) {
  fs::path dir = TempDir("batch-only");
  CmdResult r = Fusefuzz("fuzz --graphs 16 --seed 3 -j 1 -q --target " +
                         Example("--batch 4 --wrong-in-batch") + " --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  json s = ReadJson(dir / "summary.json");
  EXPECT_EQ(s["findings"], 0);
  EXPECT_FALSE(fs::exists(dir / "findings") && !fs::is_empty(dir / "findings"));
  EXPECT_EQ(s["batches"]["batched"], 16);
  EXPECT_EQ(s["batches"]["batch_only"], 4);
  EXPECT_EQ(s["batches"]["batch_only_cases"], json({0, 4, 8, 12}));
  EXPECT_GE(s["batches"]["alone"].get<int>(), 4);
  EXPECT_NE(r.out.find("batch-only: 4"), std::string::npos) << r.out;
  std::ifstream md(dir / "summary.md");
  std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("4 batch-only"), std::string::npos) << text;
  fs::remove_all(dir);
}

// A worker stuck in a batch's call past its cases' --case-timeout is killed; nothing is charged
// to the batch, its cases run again alone, and the hang is the one case's (case 3, HardSigmoid).
TEST(BatchCampaign, AWorkerStuckInABatchChargesOnlyTheCaseThatHangs) {
  fs::path dir = TempDir("batch-hang");
  CmdResult r = Fusefuzz(
      "fuzz --graphs 8 --seed 3 -j 1 -q --no-minimize --timeout 100 --case-timeout 1 --target " +
      Example("--batch 4 --hang-on HardSigmoid") + " --out " + dir.string());
  ASSERT_EQ(r.status, 1) << r.out;
  json s = ReadJson(dir / "summary.json");
  EXPECT_EQ(s["verdicts"], json({{"PASS", 7}, {"TIMEOUT", 1}}));
  EXPECT_EQ(s["batches"]["deaths"], 1);
  std::map<std::string, json> found = Findings(dir);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.begin()->second["provenance"]["case_index"], 3);
  fs::remove_all(dir);
}

// --batch 1, and a target without the capability: one case per call, no batch counts.
TEST(BatchCampaign, Batch1IsOneCasePerCall) {
  fs::path dir = TempDir("batch-1");
  CmdResult r = Fusefuzz("fuzz --graphs 8 --seed 3 -j 1 -q --batch 1 --target " +
                         Example("--batch 4 --wrong-in-batch") + " --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(ReadJson(dir / "summary.json").contains("batches"));
  fs::remove_all(dir);
}

}  // namespace
