// Reproducer validation (issue 11): every value replay or minimize would act on is checked when
// the file is read, and refused with the file and the JSON pointer; a recorded exec: target runs
// only when the user says so.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/repro.h"
#include "ir/error.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

json Fault() {
  std::ifstream in(std::string(FUSEFUZZ_SOURCE_DIR) +
                   "/corpus/faults/through-activation.repro.json");
  return json::parse(in);
}

// The message of reading `j` as "r.json", or "<accepted>".
std::string Read(const json& j) {
  try {
    ReadRepro(j, "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<accepted>";
}

std::string Edited(const std::function<void(json&)>& edit) {
  json j = Fault();
  edit(j);
  return Read(j);
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

TEST(ReproValidation, TheFaultCorpusIsAccepted) { EXPECT_EQ(Read(Fault()), "<accepted>"); }

TEST(ReproValidation, UnknownInjectAndPipelineNamesNameTheirEntry) {
  EXPECT_CONTAINS(
      Edited([](json& j) { j["target"]["options"]["inject"] = {"no-such-fault"}; }),
      "r.json: /target/options/inject/0: unknown fault \"no-such-fault\"; known rules:");
  EXPECT_CONTAINS(Edited([](json& j) {
                    j["target"]["options"]["pipeline"] = {"conv-bn-fold", "conv-bn-fould"};
                  }),
                  "r.json: /target/options/pipeline/1: unknown rule \"conv-bn-fould\"");
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["options"]["disable"] = {"x"}; }),
                  "r.json: /target/options/disable/0: unknown rule or fault \"x\"");
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["options"]["only"] = {"y"}; }),
                  "r.json: /target/options/only/0: unknown rule or fault \"y\"");
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["options"]["injects"] = json::array(); }),
                  "r.json: /target/options/injects: unknown key");
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["options"]["bisect_limit"] = -2; }),
                  "r.json: /target/options/bisect_limit: must be -1 (no limit) or >= 0");
}

TEST(ReproValidation, FindingIsRequiredWithAKnownKind) {
  EXPECT_CONTAINS(Edited([](json& j) { j["finding"]["kind"] = "weird"; }),
                  "r.json: /finding/kind: unknown finding kind \"weird\"");
  EXPECT_CONTAINS(Edited([](json& j) { j.erase("finding"); }), "r.json: /: missing \"finding\"");
  EXPECT_CONTAINS(Edited([](json& j) { j["finding"].erase("kind"); }),
                  "r.json: /finding: missing \"kind\"");
}

TEST(ReproValidation, ExtraInputTensorIsRefused) {
  EXPECT_CONTAINS(Edited([](json& j) {
                    j["inputs"]["stale"] = {{"shape", {1}}, {"data", {1}}};
                  }),
                  "r.json: /inputs/stale: tensor \"stale\" is not an input of the graph");
}

TEST(ReproValidation, OracleParametersFollowTheCommandLineRules) {
  auto oracle = [](json o) { return Edited([&](json& j) { j["oracle"] = o; }); };
  EXPECT_CONTAINS(oracle({{"kind", "ulp"}, {"max_ulp", -5}}),
                  "r.json: /oracle/max_ulp: must be an integer in [0, 2^32], got -5");
  EXPECT_CONTAINS(oracle({{"kind", "ulp"}, {"max_ulp", 1.5}}), "r.json: /oracle/max_ulp: must be");
  EXPECT_CONTAINS(oracle({{"kind", "allclose"}, {"rtol", -1}}),
                  "r.json: /oracle/rtol: must be a finite number >= 0, got -1");
  for (json k : {json(-1), json(0), json("nan"), json(1e308 * 10)}) {
    EXPECT_CONTAINS(oracle({{"kind", "bound"}, {"k", k}}), "r.json: /oracle/k: must be");
  }
  EXPECT_CONTAINS(oracle({{"kind", "bound"}, {"kk", 2}}), "r.json: /oracle/kk: unknown key");
  EXPECT_EQ(oracle({{"kind", "bound"}, {"k", 8}}), "<accepted>");
  // The function the command line uses says the same.
  EXPECT_EQ(OracleParamProblem("k", 0), "must be a finite number > 0");
  EXPECT_EQ(OracleParamProblem("max_ulp", -5), "must be an integer in [0, 2^32]");
  EXPECT_EQ(OracleParamProblem("rtol", 1e-5), "");
}

// An engine's own rule names (an ORT transformer, an mlir-opt pass) replay on that engine: a
// campaign run with `--disable affine-loop-fusion` wrote a reproducer replay refused.
TEST(ReproValidation, AnEnginesOwnRuleNamesAreAcceptedForItsTarget) {
  EXPECT_EQ(Edited([](json& j) {
              j["target"]["spec"] = "onnxruntime:all";
              j["target"]["options"]["disable"] = {"ConstantFolding", "Pad_Fusion"};
            }),
            "<accepted>");
  EXPECT_CONTAINS(Edited([](json& j) {
                    j["target"]["spec"] = "onnxruntime:all";
                    j["target"]["options"]["disable"] = {"a\nb"};
                  }),
                  "r.json: /target/options/disable/0: an engine rule name must be 1 to 256 bytes");
  EXPECT_CONTAINS(Edited([](json& j) {
                    j["target"]["spec"] = "onnxruntime:all";
                    j["target"]["options"]["only"] = {std::string(257, 'r')};
                  }),
                  "r.json: /target/options/only/0: an engine rule name");
}

TEST(ReproValidation, BadTargetSpecNamesTheFileNotTheOption) {
  std::string e = Edited([](json& j) { j["target"]["spec"] = "ssh:host"; });
  EXPECT_CONTAINS(e, "r.json: /target/spec: unknown target \"ssh:host\"");
  EXPECT_EQ(e.find("--target"), std::string::npos) << e;
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["specs"] = "embedded"; }),
                  "r.json: /target/specs: unknown key");
  // Built-in engines by name are accepted (their command is fusefuzz's own), an unknown mode is
  // refused with the modes there are.
  EXPECT_EQ(Edited([](json& j) { j["target"]["spec"] = "onnxruntime:disabled"; }), "<accepted>");
  EXPECT_EQ(Edited([](json& j) { j["target"]["spec"] = "pytorch:fx"; }), "<accepted>");
  EXPECT_CONTAINS(Edited([](json& j) { j["target"]["spec"] = "onnxruntime:fast; rm -rf ~"; }),
                  "r.json: /target/spec: unknown onnxruntime mode 'fast; rm -rf ~' (one of: ");
}

TEST(ReproValidation, RecordedExecTargetRunsOnlyWhenTrustedOrOverridden) {
  json j = Fault();
  j["target"]["spec"] = "exec:touch PWNED; exit 3";
  Repro r = ReadRepro(j, "r.json");
  try {
    ReproTargetSpec(r, "r.json", "", false);
    ADD_FAILURE() << "a shell command from a file would run";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_CONTAINS(m,
                    "r.json: /target/spec: this reproducer's target runs the shell command "
                    "'touch PWNED; exit 3'");
    EXPECT_CONTAINS(m, "--target");
    EXPECT_CONTAINS(m, "--trust-target");
  }
  EXPECT_EQ(ReproTargetSpec(r, "r.json", "", true), "exec:touch PWNED; exit 3");
  EXPECT_EQ(ReproTargetSpec(r, "r.json", "embedded", false), "embedded");
  r.target = "embedded";
  EXPECT_EQ(ReproTargetSpec(r, "r.json", "", false), "embedded");
}

}  // namespace
}  // namespace fusefuzz
