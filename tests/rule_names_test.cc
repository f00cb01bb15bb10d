// Names a user types must exist (issue 28, item 8): an unknown rule name in --disable/--only is
// exit status 2 with the target's own names and the closest one, never silently ignored by a
// target that does not know it; an exported model records its input's file name, not the path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;

std::string Example(const std::string& flags) {
  return std::string("'exec:") + FUSEFUZZ_EXAMPLE_TARGET + " " + flags + "'";
}

std::string Seed(const std::string& name) {
  return std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/" + name + ".json";
}

TEST(RuleNames, UnknownDisableNameOfAnExternalTargetIsRefusedWithItsNames) {
  fs::path dir = TempDir("rule-names");
  // A target that calls its rule Pad_Fusion (as ONNX Runtime does): PadFusion is a typo.
  CmdResult r = Fusefuzz("fuzz --graphs 3 -q --disable PadFusion --target " +
                         Example("--rule-name Pad_Fusion") + " --out " + (dir / "a").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("unknown rule 'PadFusion'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'Pad_Fusion'?"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("its rules: "), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "a" / "summary.json"));
  // The target's own spelling is accepted.
  CmdResult ok = Fusefuzz("fuzz --graphs 3 -q --disable Pad_Fusion --target " +
                          Example("--rule-name Pad_Fusion") + " --out " + (dir / "b").string());
  EXPECT_NE(ok.status, 2) << ok.out;
  // run and replay check the same way.
  CmdResult run =
      Fusefuzz("run " + Seed("op-conv") + " --disable conv-bn-fld --target " + Example(""));
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("did you mean 'conv-bn-fold'?"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

TEST(RuleNames, EmbeddedTargetSuggestsTheClosestRuleAndFault) {
  CmdResult r = Fusefuzz("fuzz --graphs 3 -q --only conv_bn_fold --out /tmp/ff-unused-names");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("did you mean 'conv-bn-fold'?"), std::string::npos) << r.out;
  CmdResult f =
      Fusefuzz("fuzz --graphs 3 -q --inject through-activaton --out /tmp/ff-unused-names");
  EXPECT_EQ(f.status, 2) << f.out;
  EXPECT_NE(f.out.find("did you mean 'through-activation'?"), std::string::npos) << f.out;
  EXPECT_FALSE(fs::exists("/tmp/ff-unused-names/summary.json"));
}

TEST(RuleNames, TargetWithoutDisableRefusesRuleOptions) {
  CmdResult r = Fusefuzz("run " + Seed("op-conv") + " --disable conv-bn-fold --target " +
                         Example("--no-capabilities"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("lacks the capability disable"), std::string::npos) << r.out;
}

TEST(Export, ModelRecordsTheInputFileNameOnly) {
  fs::path dir = TempDir("export-name");
  fs::create_directories(dir / "private-folder");
  fs::copy_file(Seed("op-conv"), dir / "private-folder" / "case.json");
  const fs::path model = dir / "m.onnx";
  CmdResult r = Fusefuzz("export " + (dir / "private-folder" / "case.json").string() + " --onnx " +
                         model.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(model, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("exported by fusefuzz from case.json"), std::string::npos);
  EXPECT_EQ(bytes.find("private-folder"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
