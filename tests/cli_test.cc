// End-to-end tests of the `fusefuzz` binary: exit statuses, messages, files written.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
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

std::string Src(const std::string& rel) { return std::string(FUSEFUZZ_SOURCE_DIR) + "/" + rel; }

std::string WriteFile(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

std::vector<std::string> Seeds() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(Src("corpus/seeds")))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Cli, VersionAndHelp) {
  CmdResult v = Fusefuzz("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("fusefuzz 0."), std::string::npos) << v.out;
  for (const char* sub : {"run", "show", "list", "gen", "coverage", "fuzz", "replay"}) {
    CmdResult h = Fusefuzz(std::string(sub) + " --help");
    EXPECT_EQ(h.status, 0) << sub;
    EXPECT_NE(h.out.find("Usage"), std::string::npos) << sub << ": " << h.out;
  }
}

TEST(Cli, UsageErrorsExit2) {
  EXPECT_EQ(Fusefuzz("").status, 2);
  EXPECT_EQ(Fusefuzz("frobnicate").status, 2);
  EXPECT_EQ(Fusefuzz("run").status, 2);  // missing graph
  EXPECT_EQ(Fusefuzz("list nothing").status, 2);
  CmdResult r = Fusefuzz("run " + Src("corpus/seeds/op-conv.json") + " --engine quantum");
  EXPECT_EQ(r.status, 2);
}

TEST(Cli, ListCounts) {
  CmdResult ops = Fusefuzz("list ops");
  ASSERT_EQ(ops.status, 0);
  EXPECT_NE(ops.out.find("FusedConv"), std::string::npos);
  EXPECT_NE(ops.out.find("HardSwish"), std::string::npos);
  EXPECT_NE(ops.out.find("QLinearConv"), std::string::npos);
  EXPECT_NE(ops.out.find("DequantizeLinear  quant"), std::string::npos);
  CmdResult rules = Fusefuzz("list rules");
  ASSERT_EQ(rules.status, 0);
  EXPECT_GE(std::count(rules.out.begin(), rules.out.end(), '\n'), 10) << rules.out;
  EXPECT_NE(rules.out.find("conv-bn-fold"), std::string::npos);
  CmdResult faults = Fusefuzz("list faults");
  ASSERT_EQ(faults.status, 0);
  EXPECT_GE(std::count(faults.out.begin(), faults.out.end(), '\n'), 10) << faults.out;
  EXPECT_NE(faults.out.find("through-activation"), std::string::npos);
}

// `list isa` and `--version` name the active ISA level of the fast kernels; FUSEFUZZ_ISA forces
// one, and an unknown or unsupported level is an input error (exit 2) naming the variable.
TEST(Cli, IsaLevel) {
  CmdResult list = Fusefuzz("list isa");
  ASSERT_EQ(list.status, 0) << list.out;
  EXPECT_NE(list.out.find("sse2    "), std::string::npos) << list.out;  // listed, maybe active
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '*'), 1) << list.out;
  setenv("FUSEFUZZ_ISA", "sse2", 1);
  CmdResult v = Fusefuzz("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("kernels sse2"), std::string::npos) << v.out;
  EXPECT_NE(Fusefuzz("list isa").out.find("* sse2"), std::string::npos);
  setenv("FUSEFUZZ_ISA", "avx3", 1);
  CmdResult bad = Fusefuzz("list ops");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("FUSEFUZZ_ISA"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("avx3"), std::string::npos) << bad.out;
  unsetenv("FUSEFUZZ_ISA");
}

TEST(Cli, RunAndShowEverySeed) {
  fs::path dir = TempDir("seeds");
  auto seeds = Seeds();
  ASSERT_GE(seeds.size(), 12u);
  for (const auto& s : seeds) {
    for (const char* engine : {"reference", "fast", "optimized"}) {
      std::string out = (dir / "out.json").string();
      CmdResult r = Fusefuzz("run " + s + " --seed 3 --engine " + engine + " -o " + out);
      ASSERT_EQ(r.status, 0) << s << " " << engine << ": " << r.out;
      EXPECT_NE(r.out.find(" min "), std::string::npos) << r.out;
      auto j = nlohmann::json::parse(std::ifstream(out));
      EXPECT_TRUE(j.is_object() && !j.empty()) << s;
    }
    CmdResult text = Fusefuzz("show " + s);
    ASSERT_EQ(text.status, 0) << text.out;
    EXPECT_NE(text.out.find("fingerprint"), std::string::npos);
    CmdResult dot = Fusefuzz("show " + s + " --dot");
    ASSERT_EQ(dot.status, 0);
    EXPECT_EQ(dot.out.rfind("digraph", 0), 0u) << dot.out.substr(0, 100);
  }
  fs::remove_all(dir);
}

TEST(Cli, RunWithInputsFileMatchesSeedRun) {
  fs::path dir = TempDir("inputs");
  std::string g = Src("corpus/seeds/glow-conv-relu-bn.json");
  std::string in = (dir / "in.json").string();
  // gen writes inputs for a graph of its own; here we write inputs by hand for the seed graph.
  CmdResult shown = Fusefuzz("show " + g + " --json");
  ASSERT_EQ(shown.status, 0);
  auto graph = nlohmann::json::parse(shown.out);
  nlohmann::json inputs;
  for (const auto& i : graph["inputs"]) {
    int64_t n = 1;
    for (int64_t d : i["shape"]) n *= d;
    nlohmann::json data = nlohmann::json::array();
    for (int64_t k = 0; k < n; ++k) data.push_back((k % 7) - 3);
    inputs[i["name"].get<std::string>()] = {{"shape", i["shape"]}, {"data", data}};
  }
  std::ofstream(in) << inputs.dump();
  std::string ref = (dir / "ref.json").string(), opt = (dir / "opt.json").string();
  ASSERT_EQ(Fusefuzz("run " + g + " --inputs " + in + " -o " + ref).status, 0);
  CmdResult r = Fusefuzz("run " + g + " --inputs " + in + " --engine optimized -o " + opt);
  ASSERT_EQ(r.status, 0) << r.out;
  fs::remove_all(dir);
}

TEST(Cli, BadInputsExit2WithLocation) {
  fs::path dir = TempDir("bad");
  struct Case {
    std::string name, text, expect;
  } cases[] = {
      {"trunc.json", "{\"format\": \"fusefuzz-graph\", \"version\": 1, \"nodes\": [", "trunc.json"},
      {"unknown-op.json",
       R"({"format":"fusefuzz-graph","version":1,"inputs":[{"name":"x","shape":[1,1,2,2]}],
           "nodes":[{"name":"n","op":"Frob","inputs":["x"],"outputs":["y"]}],"outputs":["y"]})",
       "/nodes/0"},
      {"huge.json",
       R"({"format":"fusefuzz-graph","version":1,"inputs":[{"name":"x","shape":[1000000,1000000,1,1]}],
           "nodes":[],"outputs":["x"]})",
       "limit"},
  };
  for (const auto& c : cases) {
    std::string p = WriteFile(dir, c.name, c.text);
    for (const std::string& cmd : {"run " + p, "show " + p}) {
      CmdResult r = Fusefuzz(cmd);
      EXPECT_EQ(r.status, 2) << cmd << ": " << r.out;
      EXPECT_NE(r.out.find(c.expect), std::string::npos) << cmd << ": " << r.out;
      EXPECT_NE(r.out.find(c.name), std::string::npos) << cmd << ": " << r.out;
    }
  }
  CmdResult missing = Fusefuzz("run " + (dir / "nope.json").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("nope.json"), std::string::npos);
  std::string g = Src("corpus/seeds/op-conv.json");
  CmdResult inputs = Fusefuzz("run " + g + " --inputs " +
                              WriteFile(dir, "in.json", R"({"x":{"shape":[1],"data":[1]}})"));
  EXPECT_EQ(inputs.status, 2) << inputs.out;
  CmdResult rule = Fusefuzz("run " + g + " --engine optimized --disable no-such-rule");
  EXPECT_EQ(rule.status, 2) << rule.out;
  EXPECT_NE(rule.out.find("no-such-rule"), std::string::npos) << rule.out;
  fs::remove_all(dir);
}

TEST(Cli, GenIsDeterministicAndReadable) {
  CmdResult a = Fusefuzz("gen --seed 42");
  CmdResult b = Fusefuzz("gen --seed 42");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, Fusefuzz("gen --seed 43").out);
  fs::path dir = TempDir("gen");
  std::string g = WriteFile(dir, "g.json", a.out);
  CmdResult r = Fusefuzz("run " + g + " --seed 1");
  EXPECT_EQ(r.status, 0) << r.out;
  CmdResult cfg = Fusefuzz("gen --dump-config");
  ASSERT_EQ(cfg.status, 0);
  std::string c = WriteFile(dir, "cfg.json", cfg.out);
  EXPECT_EQ(Fusefuzz("gen --seed 42 --config " + c).out, a.out);
  CmdResult bad = Fusefuzz("gen --config " + WriteFile(dir, "bad.json", R"({"no_such_key": 1})"));
  EXPECT_EQ(bad.status, 2) << bad.out;
  fs::remove_all(dir);
}

TEST(Cli, CoverageTableAndJson) {
  CmdResult md = Fusefuzz("coverage --graphs 30 --seed 5");
  ASSERT_EQ(md.status, 0) << md.out;
  EXPECT_NE(md.out.find("Generator coverage over 30 graphs"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `motif/conv_bn` |"), std::string::npos) << md.out;
  EXPECT_EQ(md.out, Fusefuzz("coverage --graphs 30 --seed 5").out);  // deterministic
  CmdResult js = Fusefuzz("coverage --graphs 30 --seed 5 --json --min-share 0.5 --only-flagged");
  ASSERT_EQ(js.status, 0) << js.out;
  nlohmann::json j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["graphs"], 30);
  ASSERT_FALSE(j["classes"].empty());
  for (const auto& c : j["classes"]) {
    EXPECT_TRUE(c["flagged"].get<bool>()) << c.dump();
    EXPECT_LT(c["share"].get<double>(), 0.5) << c.dump();
  }
  // A config that allows only Relu reaches no conv class.
  fs::path dir = TempDir("coverage");
  std::string cfg = WriteFile(dir, "relu.json", R"({"allowed_ops": ["Relu"]})");
  CmdResult relu = Fusefuzz("coverage --graphs 10 --json --config " + cfg);
  ASSERT_EQ(relu.status, 0) << relu.out;
  const nlohmann::json relu_json = nlohmann::json::parse(relu.out);  // outlives the loop
  for (const auto& c : relu_json["classes"]) {
    if (c["id"].get<std::string>().rfind("attr/Conv/", 0) == 0) {
      EXPECT_EQ(c["count"], 0) << c.dump();
    }
  }
  EXPECT_EQ(Fusefuzz("coverage --min-share 2").status, 2);
  EXPECT_EQ(Fusefuzz("coverage --config " + WriteFile(dir, "bad.json", "{\"x\": 1}")).status, 2);
  fs::remove_all(dir);
}

}  // namespace
