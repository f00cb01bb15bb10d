// What the command line says: list options that do not swallow the positional file, defaults in
// --help, did-you-mean for unknown options and commands.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli_util.h"

namespace {

using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;

std::string Src(const std::string& rel) { return std::string(FUSEFUZZ_SOURCE_DIR) + "/" + rel; }

TEST(CliUsage, ListOptionsDoNotSwallowThePositionalFile) {
  const std::string g = Src("corpus/seeds/glow-conv-relu-bn.json");
  CmdResult r = Fusefuzz("run --inject through-activation " + g + " --engine optimized");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("REWRITE: (1) through-activation"), std::string::npos) << r.out;
  // Repeated flags and comma lists add up.
  CmdResult both = Fusefuzz(
      "show --disable conv-bn-fold,conv-activation-fuse --disable "
      "identity-elim " +
      g + " --optimized");
  EXPECT_EQ(both.status, 0) << both.out;
  CmdResult bad = Fusefuzz("show --disable conv-bn-fold --disable nope " + g + " --optimized");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("nope"), std::string::npos) << bad.out;
}

TEST(CliUsage, OutputFileFoldersAreCreated) {
  // `-o out/run.json` in a fresh clone, where out/ does not exist yet.
  const auto dir = fusefuzz::testing::TempDir("outdirs");
  const std::string out = (dir / "a" / "b" / "run.json").string();
  CmdResult r = Fusefuzz("run " + Src("corpus/seeds/op-conv.json") + " -o " + out);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

TEST(CliUsage, HelpShowsDefaults) {
  CmdResult h = Fusefuzz("fuzz --help");
  ASSERT_EQ(h.status, 0);
  for (const char* s :
       {"--seed UINT=1", "--jobs INT:INT in [1 - 256]=1", "--timeout FLOAT:POSITIVE=10",
        "--minimize-budget FLOAT:POSITIVE=10", "--rtol FLOAT=1e-05", "--atol FLOAT=1e-06",
        "with neither --seconds nor --graphs"}) {
    EXPECT_NE(h.out.find(s), std::string::npos) << s << "\n" << h.out;
  }
}

TEST(CliUsage, UnknownOptionGetsASuggestion) {
  CmdResult secs = Fusefuzz("fuzz --secs 10");
  EXPECT_EQ(secs.status, 2);
  EXPECT_NE(secs.out.find("unknown option '--secs' for `fusefuzz fuzz`; did you mean '--seconds'?"),
            std::string::npos)
      << secs.out;
  EXPECT_EQ(secs.out.find("not expected"), std::string::npos) << secs.out;
  CmdResult typo = Fusefuzz("run --inejct x " + Src("corpus/seeds/op-conv.json"));
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.out.find("did you mean '--inject'?"), std::string::npos) << typo.out;
  CmdResult cmd = Fusefuzz("fuz --graphs 1");
  EXPECT_EQ(cmd.status, 2);
  EXPECT_NE(cmd.out.find("unknown command 'fuz'; did you mean 'fuzz'?"), std::string::npos)
      << cmd.out;
  // Known options with bad values keep CLI11's own message.
  CmdResult value = Fusefuzz("fuzz --jobs 0");
  EXPECT_EQ(value.status, 2);
  EXPECT_EQ(value.out.find("unknown option"), std::string::npos) << value.out;
}

TEST(CliUsage, BadNumbersAndWrongFileKindsSayWhatIsWanted) {
  // CLI11's own validator printed DBL_MAX's 309 digits here.
  CmdResult secs = Fusefuzz("fuzz --seconds ten");
  EXPECT_EQ(secs.status, 2);
  EXPECT_NE(secs.out.find("must be a positive number, not 'ten'"), std::string::npos) << secs.out;
  EXPECT_EQ(secs.out.find("17976931348623157"), std::string::npos) << secs.out;
  CmdResult zero = Fusefuzz("fuzz --graphs 0");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.out.find("must be a positive number, not '0'"), std::string::npos) << zero.out;
  // An ONNX model given where a graph is read names the commands that read models.
  CmdResult onnx = Fusefuzz("show " + Src("corpus/onnxruntime/pool-ceil-shape-inference.onnx"));
  EXPECT_EQ(onnx.status, 2);
  EXPECT_NE(onnx.out.find("is this an ONNX model? `fusefuzz check MODEL.onnx`"), std::string::npos)
      << onnx.out;
  // A graph given to import: no import needed.
  const auto dir = fusefuzz::testing::TempDir("wrongkind");
  CmdResult json =
      Fusefuzz("import " + Src("corpus/seeds/op-conv.json") + " -o " + (dir / "g.json").string());
  EXPECT_EQ(json.status, 2);
  EXPECT_NE(json.out.find("this looks like JSON: fusefuzz's graph and reproducer files need no "
                          "import"),
            std::string::npos)
      << json.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
