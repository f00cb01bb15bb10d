// `fusefuzz check` (docs/check.md) on a seed graph: PASS without faults, a minimized finding with
// an injected fault, and NOT CHECKED (exit 2) when the target declines the model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_util.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using testing::CmdResult;
using testing::Fusefuzz;
using testing::TempDir;

const std::string kBlock =
    std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/resnet-basicblock-relu-after-add.json";

TEST(CheckCommand, SeedPassesAndAnInjectedFaultIsShrunkToItsCulprit) {
  fs::path dir = TempDir("check");
  CmdResult pass = Fusefuzz("check " + kBlock + " --samples 2 -o " + dir.string());
  EXPECT_EQ(pass.status, 0) << pass.out;
  EXPECT_NE(pass.out.find("check: PASS"), std::string::npos) << pass.out;
  CmdResult fail = Fusefuzz("check " + kBlock + " --inject declaration-order -o " + dir.string());
  EXPECT_EQ(fail.status, 1) << fail.out;
  EXPECT_NE(fail.out.find("blamed on 'declaration-order'"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("finding: "), std::string::npos) << fail.out;
  EXPECT_FALSE(fs::is_empty(dir / "findings"));
  fs::remove_all(dir);
}

// Issue 28 item 6: minutes of silence looked like a hang. Each phase and sample goes to stderr as
// it happens; stdout keeps the result.
TEST(CheckCommand, TalksOnStderrPerPhaseAndSample) {
  fs::path dir = TempDir("check-progress");
  const fs::path err = dir / "stderr.txt";
  CmdResult r = Fusefuzz("check " + kBlock + " --samples 2 --inject declaration-order -o " +
                         (dir / "out").string() + " 2>" + err.string() + " >" +
                         (dir / "stdout.txt").string() + "; true");
  std::string progress, result;
  std::getline(std::ifstream(err), progress, '\0');
  std::getline(std::ifstream(dir / "stdout.txt"), result, '\0');
  for (const char* line :
       {"sample 1/2: reference", "sample 1/2: unoptimized run on embedded", "sample 2/2: optimized",
        "blaming the rewrite", "minimizing the finding", "writing findings/"}) {
    EXPECT_NE(progress.find(line), std::string::npos) << line << "\n" << progress;
  }
  EXPECT_EQ(result.find("check: ["), std::string::npos) << result;
  EXPECT_NE(result.find("blamed on 'declaration-order'"), std::string::npos) << result;
  // -q: no progress.
  CmdResult quiet = Fusefuzz("check " + kBlock + " -q -o " + (dir / "q").string() + " 2>" +
                             err.string() + " >/dev/null; true");
  std::string none;
  std::getline(std::ifstream(err), none, '\0');
  EXPECT_EQ(none.find("check: ["), std::string::npos) << none;
  fs::remove_all(dir);
}

TEST(CheckCommand, ADeclinedModelIsNotCheckedAndExits2) {
  fs::path dir = TempDir("check-declined");
  CmdResult r = Fusefuzz("check " + kBlock + " --target 'exec:" + FUSEFUZZ_EXAMPLE_TARGET +
                         " --decline-over 1' -o " + dir.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("check: NOT CHECKED: UNSUPPORTED ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("check: PASS"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
