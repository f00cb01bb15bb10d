// `fusefuzz run GRAPH --target T` and `fusefuzz list targets`: one graph on any target, judged
// as a campaign would; the built-in engines by name.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/cli_util.h"

namespace {

using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;

const std::string kSeed = std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/";

TEST(RunOnTarget, PassesCleanAndFailsWithAFault) {
  CmdResult ok = Fusefuzz("run " + kSeed + "glow-conv-relu-bn.json --target embedded");
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("unoptimized run: PASS"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("optimized run: PASS"), std::string::npos) << ok.out;

  CmdResult bad = Fusefuzz("run " + kSeed +
                           "glow-conv-relu-bn.json --target embedded --inject through-activation");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("REWRITE: (1) through-activation"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("optimized run: MISMATCH, worst element"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("unoptimized run: PASS"), std::string::npos) << bad.out;

  // Through the protocol: the same verdicts from the example target.
  CmdResult exec =
      Fusefuzz("run " + kSeed + "glow-conv-relu-bn.json --target 'exec:" + FUSEFUZZ_EXAMPLE_TARGET +
               " --inject through-activation'");
  EXPECT_EQ(exec.status, 1) << exec.out;
  EXPECT_NE(exec.out.find("optimized run: MISMATCH"), std::string::npos) << exec.out;
}

TEST(RunOnTarget, BadTargetsAreInputErrors) {
  CmdResult mode = Fusefuzz("run " + kSeed + "op-conv.json --target onnxruntime:bogus");
  EXPECT_EQ(mode.status, 2) << mode.out;
  EXPECT_NE(mode.out.find("unknown onnxruntime mode 'bogus' (one of: all"), std::string::npos)
      << mode.out;
  CmdResult engine = Fusefuzz("run " + kSeed + "op-conv.json --target tvm");
  EXPECT_EQ(engine.status, 2) << engine.out;
  EXPECT_NE(engine.out.find("pytorch[:MODE]"), std::string::npos) << engine.out;
}

TEST(ListTargets, NamesEveryBuiltinEngineMode) {
  CmdResult r = Fusefuzz("list targets");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("\nembedded +ok  fusefuzz|^embedded +ok  fusefuzz")))
      << r.out;
  for (const char* spec :
       {"pytorch:eager", "pytorch:fuse_modules", "onnxruntime:all", "onnxruntime:disabled"}) {
    EXPECT_NE(r.out.find(spec), std::string::npos) << spec << "\n" << r.out;
  }
  // Every mode of targets/pytorch/README.md's table is a mode by name (issue 45, item 13:
  // ptq_eager_dataflow was documented and "unknown pytorch mode"). One `list targets` for both
  // checks: it probes every engine (seconds).
  std::ifstream in(std::string(FUSEFUZZ_SOURCE_DIR) + "/targets/pytorch/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::regex row(R"(\n\| `([a-z_0-9]+)` \|)");
  int modes = 0;
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) {
    // Followed by a space: the name column is wide enough for it.
    const std::string spec = "pytorch:" + (*it)[1].str() + " ";
    ++modes;
    EXPECT_NE(r.out.find(spec), std::string::npos) << spec << "\n" << r.out;
  }
  EXPECT_GE(modes, 10) << doc;
}

}  // namespace
