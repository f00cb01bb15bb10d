// Untrusted input files through the `fusefuzz` binary (issue 11): exit status 2 with the file and
// the JSON pointer, and nothing read from a file runs as a command unless the user says so.
#include <gtest/gtest.h>
#include <sys/stat.h>

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

std::string Src(const std::string& rel) { return std::string(FUSEFUZZ_SOURCE_DIR) + "/" + rel; }

json Fault() {
  return json::parse(std::ifstream(Src("corpus/faults/through-activation.repro.json")));
}

std::string Save(const fs::path& dir, const std::string& name, const json& j) {
  fs::path p = dir / name;
  std::ofstream(p) << j.dump(1);
  return p.string();
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "output: " << (text)

TEST(CliInputs, ReplayDoesNotRunAShellCommandFromTheFile) {
  fs::path dir = TempDir("pwned");
  json j = Fault();
  fs::path marker = dir / "PWNED";
  j["target"]["spec"] = "exec:touch " + marker.string() + "; exit 3";
  std::string r = Save(dir, "r.json", j);
  for (const std::string& cmd :
       {"replay " + r, "minimize " + r + " -o " + (dir / "m.json").string()}) {
    CmdResult res = Fusefuzz(cmd);
    EXPECT_EQ(res.status, 2) << cmd << ": " << res.out;
    EXPECT_FALSE(fs::exists(marker)) << cmd << " ran the command from the file";
    EXPECT_CONTAINS(res.out, r + ": /target/spec: this reproducer's target runs the shell command");
    EXPECT_CONTAINS(res.out, "--trust-target");
  }
  // --target on the command line replaces it: the finding replays on the embedded optimizer.
  CmdResult over = Fusefuzz("replay " + r + " --target embedded");
  EXPECT_EQ(over.status, 0) << over.out;
  EXPECT_FALSE(fs::exists(marker));
  // --trust-target runs it (the command exits 3 before any hello: an input error, exit 2).
  CmdResult trusted = Fusefuzz("replay " + r + " --trust-target");
  EXPECT_TRUE(fs::exists(marker)) << trusted.out;
  fs::remove_all(dir);
}

TEST(CliInputs, ReplayUnknownInjectIsAnInputErrorNamingTheEntry) {
  fs::path dir = TempDir("inject");
  json j = Fault();
  j["target"]["options"]["inject"] = {"through-activation", "no-such-fault"};
  std::string r = Save(dir, "r.json", j);
  CmdResult res = Fusefuzz("replay " + r);
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, r + ": /target/options/inject/1: unknown fault \"no-such-fault\"");
  EXPECT_EQ(res.out.find("TARGET_ERROR"), std::string::npos) << res.out;
  fs::remove_all(dir);
}

TEST(CliInputs, ReplayBadTargetSpecNamesTheFile) {
  fs::path dir = TempDir("spec");
  json j = Fault();
  j["target"]["spec"] = "ssh:host";
  std::string r = Save(dir, "r.json", j);
  CmdResult res = Fusefuzz("replay " + r);
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, r + ": /target/spec: unknown target \"ssh:host\"");
  EXPECT_EQ(res.out.find("--target:"), std::string::npos) << res.out;
  fs::remove_all(dir);
}

TEST(CliInputs, RunInputsErrorsNameTheTensorsFile) {
  fs::path dir = TempDir("run-inputs");
  std::string g = Src("corpus/seeds/op-conv.json");
  json graph = json::parse(std::ifstream(g));
  json in;
  for (const auto& i : graph["inputs"]) {
    int64_t n = 1;
    for (int64_t d : i["shape"]) n *= d;
    in[i["name"].get<std::string>()] = {{"shape", i["shape"]},
                                        {"data", std::vector<double>(static_cast<size_t>(n), 1.0)}};
  }
  ASSERT_EQ(Fusefuzz("run " + g + " --inputs " + Save(dir, "ok.json", in)).status, 0);
  json extra = in;
  extra["typo"] = {{"shape", {1}}, {"data", {1}}};
  std::string p = Save(dir, "extra.json", extra);
  CmdResult res = Fusefuzz("run " + g + " --inputs " + p);
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, p + ": /typo: tensor \"typo\" is not an input of the graph");
  json wrong = in;
  std::string first = in.begin().key();
  wrong[first]["shape"] = {1};
  wrong[first]["data"] = {1};
  p = Save(dir, "wrong.json", wrong);
  res = Fusefuzz("run " + g + " --inputs " + p);
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, p + ": /" + first + "/shape: shape [1] differs from graph input");
  fs::remove_all(dir);
}

TEST(CliInputs, FifoAndDeviceAreRefusedNotWaitedFor) {
  fs::path dir = TempDir("fifo");
  std::string fifo = (dir / "g.json").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  CmdResult res = Fusefuzz("show " + fifo);
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, fifo + ": cannot read file: it is a FIFO");
  res = Fusefuzz("run /dev/zero");
  EXPECT_EQ(res.status, 2) << res.out;
  EXPECT_CONTAINS(res.out, "/dev/zero: cannot read file: it is a character device");
  fs::remove_all(dir);
}

TEST(CliInputs, OracleOptionsRefuseWhatFilesRefuse) {
  // The same function judges --k and /oracle/k: "nan" passed CLI11's PositiveNumber.
  fs::path dir = TempDir("oracle");
  for (const char* bad :
       {"--k nan", "--k 0", "--k -1", "--rtol -1", "--atol inf", "--max-ulp -5"}) {
    CmdResult res = Fusefuzz("fuzz --graphs 1 -q --no-minimize -o " + dir.string() + " " + bad);
    EXPECT_EQ(res.status, 2) << bad << ": " << res.out;
    EXPECT_CONTAINS(res.out, "must be");
  }
  fs::remove_all(dir);
}

}  // namespace
