// Issue 28 item 4: a finding on ONNX Runtime carries reproduce.js, which reproduces the bug with
// onnxruntime-node alone (no fusefuzz): exit 1 while the bug is there. Checked on the real ORT
// bug of corpus/onnxruntime/padfusion-zero-pad-into-maxpool (Pad_Fusion into a MaxPool). The ORT
// pack writes it (targets/onnxruntime/repro-script.js, capability repro; issue 42).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;

const std::string kSource = FUSEFUZZ_SOURCE_DIR;

TEST(OrtScript, FindingFolderHasAStandaloneScriptThatReproducesTheBug) {
  const std::string modules = kSource + "/targets/onnxruntime/node_modules";
  if (!fs::exists(modules + "/onnxruntime-node")) {
    GTEST_SKIP() << "onnxruntime-node is not installed (ci/setup)";
  }
  const fs::path dir = TempDir("ort-script");
  CmdResult m = Fusefuzz("minimize " + kSource +
                         "/corpus/onnxruntime/padfusion-zero-pad-into-maxpool.repro.json "
                         "--budget 30 --folder " +
                         (dir / "f").string());
  ASSERT_EQ(m.status, 0) << m.out;
  ASSERT_TRUE(fs::exists(dir / "f/reproduce.js")) << m.out;
  std::string report;
  std::getline(std::ifstream(dir / "f/report.md"), report, '\0');
  EXPECT_NE(report.find("reproduce.js"), std::string::npos);
  // Run from another folder, with the engine alone: the script finds model.onnx beside itself.
  const std::string run = "cd / && NODE_PATH=" + modules + " node " +
                          (dir / "f/reproduce.js").string() + " > " + (dir / "out.txt").string() +
                          " 2>&1";
  const int st = std::system(run.c_str());
  std::string out;
  std::getline(std::ifstream(dir / "out.txt"), out, '\0');
  ASSERT_TRUE(WIFEXITED(st)) << out;
  EXPECT_EQ(WEXITSTATUS(st), 1) << out;
  EXPECT_NE(out.find("the bug is there"), std::string::npos) << out;
  EXPECT_NE(out.find("<- off"), std::string::npos) << out;
  fs::remove_all(dir);
}

TEST(OrtScript, NoScriptForOtherTargets) {
  const fs::path dir = TempDir("no-ort-script");
  CmdResult r = Fusefuzz("fuzz --graphs 200 --seed 5 -j 2 -q --inject declaration-order --out " +
                         (dir / "c").string());
  ASSERT_EQ(r.status, 1) << r.out;
  for (const auto& e : fs::directory_iterator(dir / "c/findings")) {
    EXPECT_FALSE(fs::exists(e.path() / "reproduce.js")) << e.path();
  }
  fs::remove_all(dir);
}

}  // namespace
