// The external-target protocol end to end: fusefuzz-example-target (the embedded optimizer
// behind the protocol, with switches to misbehave) and tiny shell-script targets for the edge
// cases of the response format.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "targets/subprocess.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

// `text` contains `part` (gtest only: the tests do not link gmock).
::testing::AssertionResult Has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in '" << text << "'";
}

// x -> Conv(1x1, bias) -> BatchNorm -> ACT -> y
Graph ConvBnAct(const std::string& act, int hw = 3) {
  std::string s = std::to_string(hw);
  return ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,2,)" +
                    s + "," + s + R"(]}],
    "nodes":[
     {"name":"conv","op":"Conv","inputs":["x"],"outputs":["c"],
      "params":{"W":{"shape":[2,2,1,1],"data":[0.5,-1,0.25,2]},
                "B":{"shape":[2],"data":[0.5,-0.25]}}},
     {"name":"bn","op":"BatchNorm","inputs":["c"],"outputs":["b"],"attrs":{"epsilon":0.001},
      "params":{"scale":{"shape":[2],"data":[1.5,0.5]},"bias":{"shape":[2],"data":[0.25,-1]},
                "mean":{"shape":[2],"data":[0.125,-0.5]},"var":{"shape":[2],"data":[0.75,2]}}},
     {"name":"act","op":")" +
                    act + R"(","inputs":["b"],"outputs":["y"]}],
    "outputs":["y"]})");
}

std::string Example(const std::string& flags = "") {
  return std::string("'") + FUSEFUZZ_EXAMPLE_TARGET + "'" + (flags.empty() ? "" : " " + flags);
}

TargetSettings Timeout(double s) {
  TargetSettings t;
  t.timeout_seconds = s;
  return t;
}

std::unique_ptr<Target> Exec(const std::string& cmd, double timeout = 5) {
  return MakeExecTarget(cmd, Timeout(timeout));
}

void ExpectBitwiseEqual(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_TRUE(t.BitwiseEquals(b.at(name))) << name;
  }
}

std::vector<std::string> Rules(const std::vector<Rewrite>& rw) {
  std::vector<std::string> out;
  for (const Rewrite& r : rw) out.push_back(r.rule);
  return out;
}

// Same result as the embedded target, bit for bit, rewrites included.
void ExpectSameAsEmbedded(Target& t, const Graph& g, const RunRequest& req,
                          const RunRequest& embedded_req) {
  TensorMap in = InputsFromSeed(g, 7);
  TargetResult got = t.Run(g, in, req);
  TargetResult want = MakeEmbeddedTarget()->Run(g, in, embedded_req);
  ASSERT_EQ(want.status, RunStatus::kOk) << want.message;
  ASSERT_EQ(got.status, RunStatus::kOk) << got.message;
  ExpectBitwiseEqual(got.outputs, want.outputs);
  ASSERT_EQ(got.rewrites.size(), want.rewrites.size());
  for (size_t i = 0; i < got.rewrites.size(); ++i) {
    EXPECT_EQ(got.rewrites[i].index, want.rewrites[i].index);
    EXPECT_EQ(got.rewrites[i].rule, want.rewrites[i].rule);
    EXPECT_EQ(got.rewrites[i].nodes, want.rewrites[i].nodes);
  }
}

TargetResult RunOnce(Target& t, const Graph& g, RunRequest req = {}) {
  return t.Run(g, InputsFromSeed(g, 1), req);
}

// A shell "target": the hello, then one fixed response to the first request (id 1).
std::string Fake(const std::string& response,
                 const std::string& ops = R"(["Conv","BatchNorm","Relu"])") {
  std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"fake","ops":)" + ops + "}";
  return "echo '" + hello + "'; read -r l; echo '" + response + "'; read -r l";
}

std::string InputErrorOf(const std::string& cmd, double timeout = 5) {
  try {
    Exec(cmd, timeout);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(ExecTarget, HelloGivesCaps) {
  auto t = Exec(Example());
  EXPECT_EQ(t->caps().name, "fusefuzz-example-target");
  EXPECT_EQ(t->caps().ops.size(), AllOps().size());
  EXPECT_TRUE(t->caps().bisect_limit && t->caps().disable && t->caps().inject &&
              t->caps().reports_rewrites);
  EXPECT_EQ(t->spec(), "exec:" + Example());
}

TEST(ExecTarget, SameOutputsAndRewritesAsEmbedded) {
  auto t = Exec(Example());
  Graph g = ConvBnAct("Relu");
  RunRequest req;
  ExpectSameAsEmbedded(*t, g, req, req);
  TargetResult r = RunOnce(*t, g);
  ASSERT_FALSE(r.rewrites.empty());
  EXPECT_EQ(r.rewrites[0].rule, "conv-bn-fold");
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"conv", "bn"}));
  // Unoptimized: the graph as given, no rewrites.
  req.optimize = false;
  ExpectSameAsEmbedded(*t, g, req, req);
  EXPECT_TRUE(RunOnce(*t, g, req).rewrites.empty());
}

TEST(ExecTarget, ForwardsOptions) {
  auto t = Exec(Example());
  Graph g = ConvBnAct("Relu");
  RunRequest req;
  req.opt.disable = {"conv-bn-fold"};
  ExpectSameAsEmbedded(*t, g, req, req);
  for (const std::string& rule : Rules(RunOnce(*t, g, req).rewrites))
    EXPECT_NE(rule, "conv-bn-fold");
  req = {};
  req.opt.bisect_limit = 1;
  ExpectSameAsEmbedded(*t, g, req, req);
  EXPECT_EQ(RunOnce(*t, g, req).rewrites.size(), 1u);
  req = {};
  req.opt.inject = {"bias-not-scaled"};
  ExpectSameAsEmbedded(*t, g, req, req);
  EXPECT_EQ(Rules(RunOnce(*t, g, req).rewrites)[0], "bias-not-scaled");
  // An unknown rule name is the target's own error answer.
  req = {};
  req.opt.only = {"no-such-rule"};
  TargetResult r = RunOnce(*t, g, req);
  EXPECT_EQ(r.status, RunStatus::kError);
  EXPECT_TRUE(Has(r.message, "no-such-rule"));
}

TEST(ExecTarget, DefaultInjectedFaultMakesABuggyTarget) {
  auto t = Exec(Example("--inject bias-not-scaled"));
  RunRequest plain, injected;
  injected.opt.inject = {"bias-not-scaled"};
  ExpectSameAsEmbedded(*t, ConvBnAct("Relu"), plain, injected);
}

TEST(ExecTarget, CrashIsReportedAndTheTargetRestarts) {
  auto t = Exec(Example("--crash-on Relu"));
  TargetResult r = RunOnce(*t, ConvBnAct("Relu"));
  EXPECT_EQ(r.status, RunStatus::kCrash);
  EXPECT_TRUE(Has(r.message, "signal 6"));
  EXPECT_TRUE(Has(r.log, "crashing on Relu as asked"));
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Sigmoid")).status, RunStatus::kOk);
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Relu")).status, RunStatus::kCrash);
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Tanh")).status, RunStatus::kOk);
}

TEST(ExecTarget, HangTimesOutAndTheTargetRestarts) {
  auto t = Exec(Example("--hang-on Sigmoid"), 1);
  TargetResult r = RunOnce(*t, ConvBnAct("Sigmoid"));
  EXPECT_EQ(r.status, RunStatus::kTimeout);
  EXPECT_TRUE(Has(r.message, "1 s"));
  EXPECT_TRUE(Has(r.log, "hanging on Sigmoid"));
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Relu")).status, RunStatus::kOk);
}

// The state of a process from /proc ('S', 'Z', ...), or 0 when it is gone.
char ProcState(const std::string& pid) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return 0;
  size_t paren = stat.rfind(')');
  return paren + 2 < stat.size() ? stat[paren + 2] : 0;
}

TEST(ExecTarget, TimeoutKillsTheWholeProcessGroup) {
  std::string pid_file = ::testing::TempDir() + "/fusefuzz_exec_group_pid";
  std::remove(pid_file.c_str());
  auto t = Exec("sleep 300 & echo $! > '" + pid_file + "'; exec " + Example("--hang-on Relu"), 1);
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Relu")).status, RunStatus::kTimeout);
  std::string pid;
  std::ifstream(pid_file) >> pid;
  ASSERT_FALSE(pid.empty());
  // SIGKILL went to the group, so the background sleep is dead (gone, or a zombie until init
  // reaps it); wait for the kernel to finish it, without asserting on time.
  char state = ProcState(pid);
  for (int i = 0; i < 500 && state != 0 && state != 'Z' && state != 'X'; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    state = ProcState(pid);
  }
  EXPECT_TRUE(state == 0 || state == 'Z' || state == 'X') << "sleep " << pid << " is " << state;
  std::remove(pid_file.c_str());
}

// Issue 11 §2.14: a target whose forked child kept stdout open after the target died was
// recorded as a timeout: EOF never came. Its exit must be seen on its own.
TEST(ExecTarget, ExitWhileItsChildHoldsStdoutIsACrashNotATimeout) {
  auto t = Exec("sleep 300 & exec " + Example("--crash-on Relu"), 120);
  TargetResult r = RunOnce(*t, ConvBnAct("Relu"));
  EXPECT_EQ(r.status, RunStatus::kCrash) << r.message;
  EXPECT_TRUE(Has(r.message, "signal 6")) << r.message;
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Tanh")).status, RunStatus::kOk);
}

TEST(ExecTarget, GarbageIsAnErrorAndTheTargetRestarts) {
  auto t = Exec(Example("--garbage-on Sigmoid"));
  TargetResult r = RunOnce(*t, ConvBnAct("Sigmoid"));
  EXPECT_EQ(r.status, RunStatus::kError);
  EXPECT_TRUE(Has(r.message, "garbage"));
  EXPECT_TRUE(Has(r.message, "'this is not JSON (--garbage-on Sigmoid)'"));
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Relu")).status, RunStatus::kOk);
}

TEST(ExecTarget, UndeclaredOpIsUnsupportedWithoutAskingTheTarget) {
  auto t = Exec(Example("--unsupported Sigmoid"));
  EXPECT_FALSE(t->caps().ops.count(Op::Sigmoid));
  EXPECT_TRUE(t->caps().ops.count(Op::Relu));
  TargetResult r = RunOnce(*t, ConvBnAct("Sigmoid"));
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_TRUE(Has(r.message, "Sigmoid"));
  EXPECT_EQ(RunOnce(*t, ConvBnAct("Relu")).status, RunStatus::kOk);
}

TEST(ExecTarget, OptionsBeyondTheCapabilitiesAreUnsupported) {
  auto t = Exec(Example("--no-capabilities"));
  EXPECT_FALSE(t->caps().bisect_limit || t->caps().disable || t->caps().inject ||
               t->caps().reports_rewrites);
  Graph g = ConvBnAct("Relu");
  RunRequest req;
  req.opt.disable = {"conv-bn-fold"};
  EXPECT_TRUE(Has(RunOnce(*t, g, req).message, "capability disable"));
  req = {};
  req.opt.inject = {"bias-not-scaled"};
  EXPECT_TRUE(Has(RunOnce(*t, g, req).message, "capability inject"));
  req = {};
  req.opt.bisect_limit = 0;
  TargetResult r = RunOnce(*t, g, req);
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_TRUE(Has(r.message, "capability bisect_limit"));
  // Plain optimization still works; it just reports no rewrites.
  RunRequest plain;
  TargetResult ok = RunOnce(*t, g, plain);
  ASSERT_EQ(ok.status, RunStatus::kOk) << ok.message;
  EXPECT_TRUE(ok.rewrites.empty());
  TargetResult want = RunOnce(*MakeEmbeddedTarget(), g, plain);
  ExpectBitwiseEqual(ok.outputs, want.outputs);
}

TEST(ExecTarget, ResponseKinds) {
  Graph g = ConvBnAct("Relu");
  TargetResult r = RunOnce(*Exec(Fake(R"({"id":1,"unsupported":"too big"})")), g);
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_TRUE(Has(r.message, "too big"));
  r = RunOnce(*Exec(Fake(R"({"id":1,"error":"boom"})")), g);
  EXPECT_EQ(r.status, RunStatus::kError);
  EXPECT_EQ(r.message, "target error: boom");
  r = RunOnce(
      *Exec(Fake(
          R"({"id":1,"outputs":{"y":{"shape":[1,2,3,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,-0.0]}},"rewrites":[{"index":1,"rule":"my-fold","nodes":["conv","bn"]}]})")),
      g);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.outputs.at("y").data[16], 17.0f);
  EXPECT_TRUE(std::signbit(r.outputs.at("y").data[17]));
  ASSERT_EQ(r.rewrites.size(), 1u);
  EXPECT_EQ(r.rewrites[0].rule, "my-fold");
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"conv", "bn"}));
}

// A fake Conv/BatchNorm/Relu target declaring `caps` (a JSON array) that answers its first
// request with an error naming the first shell `case` arm (`arms`) its request line matches.
std::string RequestInspectingTarget(const std::string& caps, const std::string& arms) {
  std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"fake","ops":["Conv","BatchNorm","Relu"],"capabilities":)" +
      caps + "}";
  return "echo '" + hello + R"('; read -r l; case "$l" in)" + arms + R"( esac; read -r l)";
}

// Capability "onnx": the request also carries the exported model (base64 of a ModelProto, which
// starts with ir_version 8: bytes 08 08 -> "CAg") and the input and output names.
TEST(ExecTarget, OnnxCapabilityAddsTheModelToRequests) {
  Graph g = ConvBnAct("Relu");
  const std::string arms =
      R"( *'"onnx":{"inputs":["x"],"model":"CAg'*'"opset":17,"outputs":["y"]}'*))"
      R"( echo '{"id":1,"error":"onnx"}';; *'"onnx"'*) echo '{"id":1,"error":"bad onnx"}';;)"
      R"( *) echo '{"id":1,"error":"no onnx"}';;)";
  auto with = Exec(RequestInspectingTarget(R"(["onnx"])", arms));
  EXPECT_TRUE(with->caps().onnx);
  EXPECT_EQ(RunOnce(*with, g).message, "target error: onnx");
  auto without = Exec(RequestInspectingTarget("[]", arms));
  EXPECT_FALSE(without->caps().onnx);
  EXPECT_EQ(RunOnce(*without, g).message, "target error: no onnx");
}

// Capability "onnx_only": the model as ONNX and no graph JSON (a whole model's weights once).
TEST(ExecTarget, OnnxOnlyCapabilitySendsNoGraphJson) {
  Graph g = ConvBnAct("Relu");
  const std::string arms =
      R"( *'"graph":'*) echo '{"id":1,"error":"graph sent"}';;)"
      R"( *'"onnx":{"inputs":["x"],"model":"CAg'*) echo '{"id":1,"error":"onnx only"}';;)"
      R"( *) echo '{"id":1,"error":"no onnx"}';;)";
  auto only = Exec(RequestInspectingTarget(R"(["onnx_only"])", arms));
  EXPECT_TRUE(only->caps().onnx);
  EXPECT_TRUE(only->caps().onnx_only);
  EXPECT_EQ(RunOnce(*only, g).message, "target error: onnx only");
  auto both = Exec(RequestInspectingTarget(R"(["onnx"])", arms));
  EXPECT_FALSE(both->caps().onnx_only);
  EXPECT_EQ(RunOnce(*both, g).message, "target error: graph sent");
}

TEST(ExecTarget, BadResponsesAreErrors) {
  Graph g = ConvBnAct("Relu");
  struct Case {
    std::string response, message;
  } cases[] = {
      {R"({"id":2,"outputs":{}})", "garbage: expected a response with id 1"},
      {R"({"outputs":{}})", "garbage: expected a response with id 1"},
      {R"([1,2])", "garbage: not a JSON object"},
      {R"({"id":1,"outputs":{}})", "missing graph output 'y'"},
      {R"({"id":1,"outputs":{"y":{"shape":[1],"data":[0,1]}}})", "bad response"},
      {R"({"id":1})", "exactly one of"},
      {R"({"id":1,"error":"e","unsupported":"u"})", "exactly one of"},
      {R"({"id":1,"outputs":{"y":{"shape":[1,2,3,3],"b64":""}}})", "bad response"},
      {R"({"id":1,"outputs":{"y":{"shape":[1,2,3,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]},"z":{"shape":[1],"data":[0]}}})",
       "'z' is not a graph output"},
      {R"({"id":1,"outputs":{"y":{"shape":[1,2,3,3],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]}},"rewrites":[{"index":0,"rule":"r"}]})",
       "/rewrites/0/index"},
  };
  for (const Case& c : cases) {
    TargetResult r = RunOnce(*Exec(Fake(c.response)), g);
    EXPECT_EQ(r.status, RunStatus::kError) << c.response;
    EXPECT_TRUE(Has(r.message, c.message)) << c.response;
  }
}

// A wrong output shape is the target's answer (judged MISMATCH by the oracle), not a bad
// response: an optimizer that changes a shape has a fusion bug, not a protocol bug.
TEST(ExecTarget, WrongOutputShapeIsAnAnswerForTheOracle) {
  Graph g = ConvBnAct("Relu");
  TargetResult r =
      RunOnce(*Exec(Fake(R"({"id":1,"outputs":{"y":{"shape":[1,2,1,1],"data":[0,1]}}})")), g);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.outputs.at("y").shape, (Shape{1, 2, 1, 1}));
}

TEST(ExecTarget, OverlongLineIsGarbage) {
  std::string hello =
      R"({"protocol":"fusefuzz-target","version":1,"name":"f","ops":["Relu","Conv","BatchNorm"]})";
  auto t = MakeExecTargetWithLineCap(
      "echo '" + hello + "'; read -r l; printf '%0300d' 0; read -r l", Timeout(5), 100);
  TargetResult r = RunOnce(*t, ConvBnAct("Relu"));
  EXPECT_EQ(r.status, RunStatus::kError);
  EXPECT_TRUE(Has(r.message, "garbage: a line longer than 100 bytes starting '000"));
}

TEST(ExecTarget, TargetThatDiesBeforeReadingIsACrashNotASigpipe) {
  // 1 MiB of input overflows the pipe, so the write hits a closed pipe (EPIPE, not SIGPIPE).
  Graph g = ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,1,512,512]}],
    "nodes":[{"name":"r","op":"Relu","inputs":["x"],"outputs":["y"]}],"outputs":["y"]})");
  auto t = Exec(
      R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"f","ops":["Relu"]}'; echo bye >&2; exit 3)");
  TargetResult r = RunOnce(*t, g);
  EXPECT_EQ(r.status, RunStatus::kCrash);
  EXPECT_TRUE(Has(r.message, "exited with status 3"));
  EXPECT_EQ(r.log, "bye\n");
}

TEST(ExecTarget, BadHellosAreInputErrors) {
  EXPECT_TRUE(Has(InputErrorOf(Example("--bad-hello")), "unsupported protocol version 99"));
  std::string e = InputErrorOf("echo hi");
  EXPECT_TRUE(Has(e, "target exec:echo hi: "));
  EXPECT_TRUE(Has(e, "not a JSON object: 'hi'"));
  EXPECT_TRUE(Has(
      InputErrorOf(
          R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"x","ops":["Conv","Frobnicate"]}')"),
      "/ops/1: unknown op \"Frobnicate\""));
  EXPECT_TRUE(Has(InputErrorOf(R"(echo '{"protocol":"other","version":1,"name":"x","ops":[]}')"),
                  "\"protocol\" must be \"fusefuzz-target\""));
  EXPECT_TRUE(Has(InputErrorOf(R"(echo '{"protocol":"fusefuzz-target","version":1,"ops":[]}')"),
                  "\"name\""));
  e = InputErrorOf("echo oops >&2; exit 3");
  EXPECT_TRUE(Has(e, "exited with status 3 before writing its hello line"));
  EXPECT_TRUE(Has(e, "oops"));
  EXPECT_TRUE(Has(InputErrorOf("sleep 30", 0.5), "no hello line within 0.5 s"));
  EXPECT_TRUE(Has(
      InputErrorOf(
          R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"x","ops":[],"rules":"Pad_Fusion"}')"),
      "\"rules\" must be an array"));
  EXPECT_TRUE(Has(
      InputErrorOf(
          R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"x","ops":[],"rules":["a",7]}')"),
      "/rules/1: must be a non-empty string"));
  EXPECT_TRUE(Has(
      InputErrorOf(
          R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"x","ops":[],"quantize_rounding":"half_up"}')"),
      "\"quantize_rounding\" must be \"half_even\", \"half_away\" or \"reciprocal_multiply\""));
}

TEST(ExecTarget, HelloQuantizeRoundingDefaultsToOnnx) {
  EXPECT_EQ(Exec(Example())->caps().quantize_rounding, QuantizeRounding::kHalfEven);
  auto t = Exec(
      R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"x","ops":[],"quantize_rounding":"half_away"}'; read -r l)");
  EXPECT_EQ(t->caps().quantize_rounding, QuantizeRounding::kHalfAway);
}

// Issue 28 item 8: the names a target's options take come from its hello ("rules").
TEST(ExecTarget, HelloRulesAreTheNamesDisableTakes) {
  auto t = Exec(
      R"(echo '{"protocol":"fusefuzz-target","version":1,"name":"ort","ops":["Conv"],"capabilities":["disable"],"rules":["Pad_Fusion","ConvBNFusion"]}'; read -r l)");
  EXPECT_EQ(t->caps().rules, (std::vector<std::string>{"Pad_Fusion", "ConvBNFusion"}));
  // The example target declares the embedded optimizer's names.
  auto ex = Exec(Example());
  const auto& rules = ex->caps().rules;
  EXPECT_NE(std::find(rules.begin(), rules.end(), "conv-bn-fold"), rules.end());
  EXPECT_NE(std::find(rules.begin(), rules.end(), "through-activation"), rules.end());
}

TEST(ExecTarget, MissingProgramIsAnInputError) {
  std::string e = InputErrorOf("/nonexistent/fusefuzz-no-such-program --flag");
  EXPECT_TRUE(Has(e, "target exec:/nonexistent/fusefuzz-no-such-program --flag"));
  EXPECT_TRUE(Has(e, "exited with status 127"));
  EXPECT_TRUE(Has(e, "not found"));
}

TEST(ExecTarget, MakeTargetParsesExecSpecs) {
  auto t = MakeTarget("exec:" + Example("--name via-spec"), Timeout(5));
  EXPECT_EQ(t->caps().name, "via-spec");
  EXPECT_THROW(MakeTarget("exec:" + Example(), Timeout(0)), InputError);
}

TEST(ExecTarget, SchemaListsEveryOp) {
  nlohmann::json schema =
      ReadJsonFile(std::string(FUSEFUZZ_SOURCE_DIR) + "/docs/target-protocol.schema.json");
  std::vector<std::string> want;
  for (Op op : AllOps()) want.emplace_back(OpName(op));
  EXPECT_EQ(schema["$defs"]["op"]["enum"].get<std::vector<std::string>>(), want)
      << "update the op enum of docs/target-protocol.schema.json";
}

TEST(ExecTarget, DestructorKillsATargetThatIgnoresEof) {
  // Closing stdin does not stop this one; the destructor must still return.
  auto t = Exec(
      R"(trap '' TERM; echo '{"protocol":"fusefuzz-target","version":1,"name":"f","ops":["Relu"]}'; exec sleep 300)");
  EXPECT_EQ(t->caps().name, "f");
  t.reset();
}

}  // namespace
}  // namespace fusefuzz
