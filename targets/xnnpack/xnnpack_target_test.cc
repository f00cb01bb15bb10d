// `xnnpack:fp32` through the protocol (targets/xnnpack/README.md): hello, the two fusions of
// xnn_create_runtime reported and withheld, the NHWC translation judged against the reference,
// unsupported answers, and a runtime abort recorded as a crash with its stderr. Skipped when
// CMake did not find libxnnpack-dev.
#include <gtest/gtest.h>

#include <cmath>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "targets/builtin_targets.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

std::unique_ptr<Target> Xnnpack(const std::string& flags = "") {
  std::optional<std::string> cmd;
  try {
    cmd = BuiltinTargetCommand("xnnpack:fp32");
  } catch (const InputError& e) {
    return nullptr;  // not built: the caller skips
  }
  TargetSettings s;
  s.timeout_seconds = 30;
  return MakeExecTarget(*cmd + (flags.empty() ? "" : " " + flags), s);
}

#define XNNPACK_OR_SKIP(t, flags)             \
  std::unique_ptr<Target> t = Xnnpack(flags); \
  if (!t) GTEST_SKIP() << "xnnpack target not built (libxnnpack-dev missing)"

// x[1,3,5,4] -> Pad(t1,l0,b1,r2, VALUE) -> Conv 3x3 (group G) -> Relu6 -> y, and x -> Sigmoid -> z
Graph PadConvClamp(const std::string& value, int group = 1) {
  const int m = 3, cg = 3 / group;
  std::string w;
  for (int i = 0; i < m * cg * 9; ++i) w += (i ? "," : "") + std::to_string((i % 7 - 3) * 0.25);
  return ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,3,5,4]}],
    "nodes":[
     {"name":"pad","op":"Pad","inputs":["x"],"outputs":["p"],
      "attrs":{"pads":[1,0,1,2],"value":)" +
                    value + R"(}},
     {"name":"conv","op":"Conv","inputs":["p"],"outputs":["c"],
      "attrs":{"group":)" +
                    std::to_string(group) + R"(,"pads":[1,1,0,0]},
      "params":{"W":{"shape":[3,)" +
                    std::to_string(cg) + R"(,3,3],"data":[)" + w + R"(]},
                "B":{"shape":[3],"data":[0.5,-0.25,1]}}},
     {"name":"clamp","op":"Relu6","inputs":["c"],"outputs":["y"]},
     {"name":"sig","op":"Sigmoid","inputs":["x"],"outputs":["z"]}],
    "outputs":["y","z"]})");
}

// The target's outputs agree with the reference to a few float32 roundings of the magnitude.
void ExpectCloseToReference(const Graph& g, const TensorMap& in, const TargetResult& r) {
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
  const RefTensorMap ref = RunReference(g, in);
  for (const std::string& o : g.outputs) {
    const Tensor& got = r.outputs.at(o);
    ASSERT_EQ(got.shape, ref.at(o).shape) << o;
    for (size_t i = 0; i < got.data.size(); ++i) {
      const double tol = 64 * 0x1p-24 * std::max(ref.at(o).mag[i], 1e-30);
      EXPECT_LE(std::fabs(got.data[i] - ref.at(o).value[i]), tol) << o << "[" << i << "]";
    }
  }
}

std::vector<std::string> Rules(const TargetResult& r) {
  std::vector<std::string> out;
  for (const Rewrite& w : r.rewrites) out.push_back(w.rule);
  return out;
}

TEST(XnnpackTarget, HelloDeclaresTheTranslatedOpsAndTheLibrary) {
  XNNPACK_OR_SKIP(t, "");
  const TargetCaps& c = t->caps();
  EXPECT_EQ(c.name, "xnnpack:fp32");
  EXPECT_NE(c.engine.find("XNNPACK 0.0~git20220216"), std::string::npos) << c.engine;
  EXPECT_TRUE(c.ops.count(Op::Conv) && c.ops.count(Op::Pad) && c.ops.count(Op::HardSwish));
  EXPECT_FALSE(c.ops.count(Op::BatchNorm) || c.ops.count(Op::Concat) || c.ops.count(Op::Tanh));
  EXPECT_TRUE(c.reports_rewrites && c.disable && c.bisect_limit && c.bench);
  EXPECT_FALSE(c.inject);
  EXPECT_EQ(c.precision, Precision::kFloat32);
  EXPECT_EQ(c.quantize_rounding, QuantizeRounding::kReciprocalMultiply);
}

TEST(XnnpackTarget, FusesClampAndZeroPadIntoTheConvolutionAndMatchesTheReference) {
  XNNPACK_OR_SKIP(t, "");
  const Graph g = PadConvClamp("0");
  const TensorMap in = InputsFromSeed(g, 7);
  RunRequest fused;
  const TargetResult a = t->Run(g, in, fused);
  ExpectCloseToReference(g, in, a);
  ASSERT_EQ(a.rewrites.size(), 2u);
  // XNNPACK visits values in id order: the pad's output comes before the conv's.
  EXPECT_EQ(a.rewrites[0].rule, "fuse Constant Pad Node into Convolution 2D Node");
  EXPECT_EQ(a.rewrites[0].nodes, (std::vector<std::string>{"pad", "conv"}));
  EXPECT_EQ(a.rewrites[1].rule, "fuse Clamp Node into upstream Node");
  EXPECT_EQ(a.rewrites[1].nodes, (std::vector<std::string>{"conv", "clamp"}));

  RunRequest unfused;
  unfused.optimize = false;
  const TargetResult b = t->Run(g, in, unfused);
  ExpectCloseToReference(g, in, b);
  EXPECT_TRUE(b.rewrites.empty());

  RunRequest no_clamp;
  no_clamp.opt.disable = {"fuse Clamp Node into upstream Node"};
  EXPECT_EQ(Rules(t->Run(g, in, no_clamp)),
            (std::vector<std::string>{"fuse Constant Pad Node into Convolution 2D Node"}));
  RunRequest first_only;
  first_only.opt.bisect_limit = 1;
  const TargetResult f = t->Run(g, in, first_only);
  ExpectCloseToReference(g, in, f);
  EXPECT_EQ(f.rewrites.size(), 1u);
}

TEST(XnnpackTarget, DepthwisePadFusesButNonZeroAndNegativeZeroPadsDoNot) {
  XNNPACK_OR_SKIP(t, "");
  const Graph dw = PadConvClamp("0", 3);
  const TensorMap in = InputsFromSeed(dw, 3);
  const TargetResult a = t->Run(dw, in, RunRequest{});
  ExpectCloseToReference(dw, in, a);
  ASSERT_FALSE(a.rewrites.empty());
  EXPECT_EQ(a.rewrites[0].rule, "fuse Constant Pad Node into Depthwise Convolution 2D Node");
  // XNNPACK compares the fill value's bits with 0: 1.5 and -0 stay separate Pad nodes.
  for (const char* v : {"1.5", "-0.0"}) {
    const Graph g = PadConvClamp(v);
    const TargetResult r = t->Run(g, in, RunRequest{});
    ExpectCloseToReference(g, in, r);
    EXPECT_EQ(Rules(r), (std::vector<std::string>{"fuse Clamp Node into upstream Node"})) << v;
  }
}

TEST(XnnpackTarget, AnswersUnsupportedForWhatXnnpackCannotExpress) {
  XNNPACK_OR_SKIP(t, "");
  Graph g = PadConvClamp("0");
  g.nodes[0].attrs["mode"] = std::string("reflect");
  const TensorMap in = InputsFromSeed(g, 1);
  TargetResult r = t->Run(g, in, RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("Pad mode 'reflect'"), std::string::npos) << r.message;
  Graph c = PadConvClamp("0");
  c.nodes[2].op = Op::Clip;
  c.nodes[2].attrs = {{"min", 2.0}, {"max", 1.0}};
  r = t->Run(c, in, RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("min < max"), std::string::npos) << r.message;
  RunRequest inject;
  inject.opt.inject = {"bias-not-scaled"};
  r = t->Run(PadConvClamp("0"), in, inject);  // fusefuzz refuses: no capability inject
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  // An op the hello leaves out never reaches the program.
  Graph bn = ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,2,2]}],
    "nodes":[{"name":"bn","op":"BatchNorm","inputs":["x"],"outputs":["y"],
      "params":{"scale":{"shape":[2],"data":[1,2]},"bias":{"shape":[2],"data":[0,1]},
                "mean":{"shape":[2],"data":[0,0]},"var":{"shape":[2],"data":[1,1]}}}],
    "outputs":["y"]})");
  r = t->Run(bn, InputsFromSeed(bn, 1), RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
}

TEST(XnnpackTarget, AnAbortInsideTheTargetIsACrashWithItsStderrAndTheNextCaseRuns) {
  XNNPACK_OR_SKIP(t, "--crash-on Sigmoid");
  const Graph g = PadConvClamp("0");
  const TensorMap in = InputsFromSeed(g, 1);
  const TargetResult r = t->Run(g, in, RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kCrash);
  EXPECT_NE(r.log.find("aborting on Sigmoid (node 'sig')"), std::string::npos) << r.log;
  Graph no_sigmoid = g;
  no_sigmoid.nodes.pop_back();
  no_sigmoid.outputs = {"y"};
  const TargetResult next = t->Run(no_sigmoid, in, RunRequest{});
  ExpectCloseToReference(no_sigmoid, in, next);
}

TEST(XnnpackTarget, TimesItsOwnRuns) {
  XNNPACK_OR_SKIP(t, "");
  const Graph g = PadConvClamp("0");
  const TensorMap in = InputsFromSeed(g, 1);
  RunRequest b;
  b.bench_warmup = 1;
  b.bench_runs = 5;
  const TargetResult r = t->Run(g, in, b);
  ExpectCloseToReference(g, in, r);
  ASSERT_TRUE(r.timings.has_value());
  EXPECT_EQ(r.timings->runs, 5);
  EXPECT_GT(r.timings->min_ns, 0);
  EXPECT_LE(r.timings->min_ns, r.timings->median_ns);
}

}  // namespace
}  // namespace fusefuzz
