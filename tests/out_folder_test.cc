// One default output place (docs/campaign.md, "Output folders"): out/<command> below the
// working directory, created with out/ itself in a fresh tree; bench refuses a non-empty --out
// unless --force, as fuzz does unless --resume or --force.
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

TEST(OutFolders, EveryCommandWritesUnderOutInAFreshTree) {
  const fs::path dir = TempDir("default-out");
  const std::string cd = "cd " + dir.string() + " && ";
  // Run from the fresh folder: no out/ there yet.
  const std::string bin = FUSEFUZZ_BINARY;
  ASSERT_EQ(std::system((cd + bin + " fuzz --graphs 3 -q > /dev/null 2>&1").c_str()), 0);
  EXPECT_TRUE(fs::exists(dir / "out/fuzz/summary.json"));
  ASSERT_EQ(std::system((cd + bin +
                         " bench --target embedded --tiny --repetitions 1 --runs 1 --warmup 0 "
                         "--filter conv_bn_relu/ > /dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_TRUE(fs::exists(dir / "out/bench/benchmarks.md"));
  fs::remove_all(dir);
}

TEST(OutFolders, BenchRefusesANonEmptyOutUnlessForce) {
  const fs::path dir = TempDir("bench-out");
  std::ofstream(dir / "results.txt") << "someone's results\n";
  const std::string args =
      "bench --target embedded --tiny --repetitions 1 --runs 1 --warmup 0 "
      "--filter conv_bn_relu/ --out " +
      dir.string();
  CmdResult refused = Fusefuzz(args);
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("is not empty"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--force"), std::string::npos) << refused.out;
  EXPECT_FALSE(fs::exists(dir / "benchmarks.md"));
  CmdResult forced = Fusefuzz(args + " --force");
  EXPECT_EQ(forced.status, 0) << forced.out;
  EXPECT_TRUE(fs::exists(dir / "benchmarks.md"));
  EXPECT_TRUE(fs::exists(dir / "results.txt"));  // --force replaces bench's files only
  // Re-tabulating a run into its own folder is not refused for being non-empty.
  CmdResult again = Fusefuzz("bench --from-json " + (dir / "benchmarks.json").string() + " --out " +
                             dir.string());
  EXPECT_EQ(again.out.find("is not empty"), std::string::npos) << again.out;
  fs::remove_all(dir);
}

}  // namespace
