// `armnn:fp32|fp16|bf16` through the protocol (targets/armnn/README.md): hello and declared
// precision, FoldPadIntoConvolution2d observed and withheld, the translation judged against the
// reference (fp16/bf16 at their own unit roundoff), unsupported answers, and an abort recorded as
// a crash. Skipped when CMake did not find libarmnn-dev and the CpuRef backend.
#include <gtest/gtest.h>

#include <cmath>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "targets/builtin_targets.h"
#include "targets/rule_names.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

std::unique_ptr<Target> Armnn(const std::string& mode, const std::string& flags = "") {
  std::optional<std::string> cmd;
  try {
    cmd = BuiltinTargetCommand("armnn:" + mode);
  } catch (const InputError& e) {
    return nullptr;
  }
  TargetSettings s;
  s.timeout_seconds = 30;
  return MakeExecTarget(*cmd + (flags.empty() ? "" : " " + flags), s);
}

#define ARMNN_OR_SKIP(t, mode, flags)             \
  std::unique_ptr<Target> t = Armnn(mode, flags); \
  if (!t) GTEST_SKIP() << "armnn target not built (libarmnn-dev missing)"

// x[1,2,5,4] -> Pad(t1,l0,b1,r2) -> Conv 3x3 (no pads of its own) -> Relu -> y
Graph PadConv(const std::string& conv_pads = "[0,0,0,0]") {
  std::string w;
  for (int i = 0; i < 3 * 2 * 9; ++i) w += (i ? "," : "") + std::to_string((i % 7 - 3) * 0.25);
  return ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,5,4]}],
    "nodes":[
     {"name":"pad","op":"Pad","inputs":["x"],"outputs":["p"],"attrs":{"pads":[1,0,1,2]}},
     {"name":"conv","op":"Conv","inputs":["p"],"outputs":["c"],"attrs":{"pads":)" +
                    conv_pads +
                    R"(},
      "params":{"W":{"shape":[3,2,3,3],"data":[)" +
                    w + R"(]},
                "B":{"shape":[3],"data":[0.5,-0.25,1]}}},
     {"name":"act","op":"Relu","inputs":["c"],"outputs":["y"]}],
    "outputs":["y"]})");
}

// |got - ref| <= 64 u m elementwise, u the mode's unit roundoff.
void ExpectCloseToReference(const Graph& g, const TensorMap& in, const TargetResult& r, double u) {
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
  const RefTensorMap ref = RunReference(g, in);
  for (const std::string& o : g.outputs) {
    const Tensor& got = r.outputs.at(o);
    ASSERT_EQ(got.shape, ref.at(o).shape) << o;
    for (size_t i = 0; i < got.data.size(); ++i) {
      EXPECT_LE(std::fabs(got.data[i] - ref.at(o).value[i]), 64 * u * ref.at(o).mag[i] + 1e-30)
          << o << "[" << i << "]";
    }
  }
}

TEST(ArmnnTarget, HelloDeclaresEngineOpsAndPrecisionPerMode) {
  for (const auto& [mode, p] : {std::pair{"fp32", Precision::kFloat32},
                                {"fp16", Precision::kFloat16},
                                {"bf16", Precision::kBFloat16}}) {
    ARMNN_OR_SKIP(t, mode, "");
    const TargetCaps& c = t->caps();
    EXPECT_EQ(c.name, std::string("armnn:") + mode);
    EXPECT_NE(c.engine.find("Arm NN"), std::string::npos) << c.engine;
    EXPECT_NE(c.engine.find("CpuRef"), std::string::npos) << c.engine;
    EXPECT_EQ(c.precision, p) << mode;
    EXPECT_EQ(c.quantize_rounding, QuantizeRounding::kHalfAway) << mode;
    EXPECT_TRUE(c.ops.count(Op::Conv) && c.ops.count(Op::BatchNorm) && c.ops.count(Op::Concat));
    EXPECT_FALSE(c.ops.count(Op::Gelu) || c.ops.count(Op::FusedConv));
    EXPECT_TRUE(c.reports_rewrites && c.disable && c.bisect_limit && c.bench);
    // Its own rule, not fusefuzz's catalogue, is what a campaign counts as fired or not.
    EXPECT_EQ(DeclaredFusions(c), std::vector<std::string>{"FoldPadIntoConvolution2d"});
  }
}

TEST(ArmnnTarget, FoldsPadIntoConvolutionOnlyWhenOptimizedAndAllowed) {
  ARMNN_OR_SKIP(t, "fp32", "");
  const Graph g = PadConv();
  const TensorMap in = InputsFromSeed(g, 5);
  const TargetResult a = t->Run(g, in, RunRequest{});
  ExpectCloseToReference(g, in, a, 0x1p-24);
  ASSERT_EQ(a.rewrites.size(), 1u);
  EXPECT_EQ(a.rewrites[0].rule, "FoldPadIntoConvolution2d");
  EXPECT_EQ(a.rewrites[0].nodes, (std::vector<std::string>{"pad", "conv"}));
  RunRequest unfused;
  unfused.optimize = false;
  const TargetResult b = t->Run(g, in, unfused);
  ExpectCloseToReference(g, in, b, 0x1p-24);
  EXPECT_TRUE(b.rewrites.empty());
  RunRequest disabled;
  disabled.opt.disable = {"FoldPadIntoConvolution2d"};
  EXPECT_TRUE(t->Run(g, in, disabled).rewrites.empty());
  RunRequest none;
  none.opt.bisect_limit = 0;
  EXPECT_TRUE(t->Run(g, in, none).rewrites.empty());
}

TEST(ArmnnTarget, ReducedModesRunAtTheirPrecision) {
  for (const auto& [mode, u] : {std::pair{"fp16", 0x1p-11}, {"bf16", 0x1p-8}}) {
    ARMNN_OR_SKIP(t, mode, "");
    const Graph g = PadConv();
    const TensorMap in = InputsFromSeed(g, 5);
    RunRequest unfused;
    unfused.optimize = false;
    ExpectCloseToReference(g, in, t->Run(g, in, unfused), u);
  }
}

// A depthwise conv with channel multiplier 2 and distinct weights per output channel: a wrong
// reorder into Arm NN's [multiplier, C, kH, kW] layout swaps channels (conv_layout.h).
TEST(ArmnnTarget, DepthwiseWithAChannelMultiplierMatchesTheReference) {
  ARMNN_OR_SKIP(t, "fp32", "");
  std::string w;
  for (int i = 0; i < 6 * 9; ++i) w += (i ? "," : "") + std::to_string((i * 5 % 11 - 5) * 0.125);
  const Graph g = ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,3,5,4]}],
    "nodes":[{"name":"dw","op":"Conv","inputs":["x"],"outputs":["y"],
      "attrs":{"group":3,"pads":[1,1,1,1]},
      "params":{"W":{"shape":[6,1,3,3],"data":[)" +
                             w + R"(]},"B":{"shape":[6],"data":[1,2,3,4,5,6]}}}],
    "outputs":["y"]})");
  const TensorMap in = InputsFromSeed(g, 3);
  ExpectCloseToReference(g, in, t->Run(g, in, RunRequest{}), 0x1p-24);
}

TEST(ArmnnTarget, AnswersUnsupportedForWhatArmnnCannotExpress) {
  ARMNN_OR_SKIP(t, "fp32", "");
  Graph g = PadConv();
  g.nodes[0].attrs["mode"] = std::string("edge");
  const TensorMap in = InputsFromSeed(g, 1);
  TargetResult r = t->Run(g, in, RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("Pad mode 'edge'"), std::string::npos) << r.message;
  Graph grouped = ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,4,3,3]}],
    "nodes":[{"name":"conv","op":"Conv","inputs":["x"],"outputs":["y"],"attrs":{"group":2},
      "params":{"W":{"shape":[2,2,1,1],"data":[1,2,3,4]}}}],
    "outputs":["y"]})");
  r = t->Run(grouped, InputsFromSeed(grouped, 1), RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("groups"), std::string::npos) << r.message;
}

TEST(ArmnnTarget, AnAbortInsideTheTargetIsACrashWithItsStderr) {
  ARMNN_OR_SKIP(t, "fp32", "--crash-on Relu");
  const Graph g = PadConv();
  const TensorMap in = InputsFromSeed(g, 1);
  const TargetResult r = t->Run(g, in, RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kCrash);
  EXPECT_NE(r.log.find("aborting on Relu (node 'act')"), std::string::npos) << r.log;
}

TEST(ArmnnTarget, TimesItsOwnRuns) {
  ARMNN_OR_SKIP(t, "fp32", "");
  const Graph g = PadConv();
  const TensorMap in = InputsFromSeed(g, 1);
  RunRequest b;
  b.bench_runs = 3;
  const TargetResult r = t->Run(g, in, b);
  ExpectCloseToReference(g, in, r, 0x1p-24);
  ASSERT_TRUE(r.timings.has_value());
  EXPECT_EQ(r.timings->runs, 3);
  EXPECT_LE(r.timings->min_ns, r.timings->median_ns);
}

}  // namespace
}  // namespace fusefuzz
