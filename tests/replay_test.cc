// `fusefuzz replay`: what it accepts as meeting an expectation. MISTRUSTED (the data cannot tell)
// is not a pass: `--expect pass` on such a case must not print OK (issue 28, item 5).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;
using nlohmann::json;

// A one-Relu reproducer on the embedded target with the given input values.
fs::path ReluRepro(const fs::path& dir, const std::string& name, const std::vector<float>& x) {
  json repro = {
      {"format", "fusefuzz-repro"},
      {"version", 1},
      {"target", {{"spec", "embedded"}}},
      {"finding", {{"kind", "fusion"}, {"verdict", "MISMATCH"}}},
      {"graph",
       {{"format", "fusefuzz-graph"},
        {"version", 2},
        {"inputs", {{{"name", "x"}, {"shape", {1, 1, 2, 2}}}}},
        {"nodes", {{{"name", "relu"}, {"op", "Relu"}, {"inputs", {"x"}}, {"outputs", {"y"}}}}},
        {"outputs", {"y"}}}},
      {"inputs", {{"x", {{"shape", {1, 1, 2, 2}}, {"data", x}}}}}};
  fs::path p = dir / (name + ".repro.json");
  std::ofstream(p) << repro.dump(1);
  return p;
}

TEST(Replay, ExpectPassIsNotMetByMistrusted) {
  fs::path dir = TempDir("replay-mistrusted");
  // All inputs negative: the Relu's reference is all zeros, nothing is informative.
  fs::path zeros = ReluRepro(dir, "zeros", {-1.0f, -2.0f, -0.5f, -3.0f});
  CmdResult r = Fusefuzz("replay " + zeros.string() + " --expect pass");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("OK "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISTRUSTED is not a pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0/1 reproducers met the expectation"), std::string::npos) << r.out;
  // The same graph on informative inputs passes.
  fs::path good = ReluRepro(dir, "good", {1.0f, -2.0f, 0.5f, 3.0f});
  CmdResult p = Fusefuzz("replay " + good.string() + " --expect pass");
  EXPECT_EQ(p.status, 0) << p.out;
  EXPECT_NE(p.out.find("OK "), std::string::npos) << p.out;
  fs::remove_all(dir);
}

}  // namespace
