// `xnnpack:int8` through the protocol (targets/xnnpack/README.md, "xnnpack:int8"): QDQ conv
// chains as XNNPACK's qu8 / qs8 / qc8 convolutions, QLinearConv and QLinearAdd, judged on the
// integer grid against the reference, the chain rewrite reported and withheld, and the
// refusals of what XNNPACK cannot express. Skipped when CMake did not find libxnnpack-dev.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "targets/builtin_targets.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

std::unique_ptr<Target> Int8() {
  std::optional<std::string> cmd;
  try {
    cmd = BuiltinTargetCommand("xnnpack:int8");
  } catch (const InputError& e) {
    return nullptr;
  }
  TargetSettings s;
  s.timeout_seconds = 30;
  return MakeExecTarget(*cmd, s);
}

#define INT8_OR_SKIP(t)               \
  std::unique_ptr<Target> t = Int8(); \
  if (!t) GTEST_SKIP() << "xnnpack target not built (libxnnpack-dev missing)"

// n float32 values f(0), f(1), ... printed exactly (9 significant digits).
std::string List(int n, float (*f)(int)) {
  std::ostringstream os;
  os.precision(9);
  for (int i = 0; i < n; ++i) os << (i ? "," : "") << f(i);
  return os.str();
}

// x[1,2,5,5] -> Q -> DQ -> Conv 3x3 (W on an int8 grid, per tensor or per channel) -> ACT -> Q -> y
Graph QdqConv(const std::string& type, int zx, int zy, bool per_channel, const std::string& act) {
  // On the weight grid exactly: float32(s * q), as DequantizeLinear computes it.
  const std::string w = List(3 * 2 * 9, [](int i) {
    return static_cast<float>((i * 37) % 255 - 127) * (i < 18 ? 0.01f : 0.02f);
  });
  const std::string wq =
      per_channel ? R"({"type":"int8","scale":[0.01,0.02,0.02],"zero_point":[0,0,0],"axis":0})"
                  : R"({"type":"int8","scale":[0.01],"zero_point":[0]})";
  std::string wdata = w;
  if (!per_channel) {
    wdata = List(3 * 2 * 9, [](int i) { return static_cast<float>((i * 37) % 255 - 127) * 0.01f; });
  }
  const std::string qx =
      R"({"type":")" + type + R"(","scale":[0.05],"zero_point":[)" + std::to_string(zx) + "]}";
  const std::string qy =
      R"({"type":")" + type + R"(","scale":[0.25],"zero_point":[)" + std::to_string(zy) + "]}";
  std::string nodes = R"(
     {"name":"qx","op":"QuantizeLinear","inputs":["x"],"outputs":["xq"],"quant":{"y":)" +
                      qx + R"(}},
     {"name":"dqx","op":"DequantizeLinear","inputs":["xq"],"outputs":["xd"],"quant":{"x":)" +
                      qx + R"(}},
     {"name":"conv","op":"Conv","inputs":["xd"],"outputs":["c"],"attrs":{"pads":[1,1,1,1]},
      "params":{"W":{"shape":[3,2,3,3],"data":[)" +
                      wdata + R"(]},
                "B":{"shape":[3],"data":[0.3,-0.7,1.1]}},
      "quant":{"W":)" +
                      wq + "}}";
  std::string last = "c";
  if (!act.empty()) {
    nodes += R"(,{"name":"act","op":")" + act + R"(","inputs":["c"],"outputs":["a"]})";
    last = "a";
  }
  nodes += R"(,{"name":"qy","op":"QuantizeLinear","inputs":[")" + last +
           R"("],"outputs":["y"],"quant":{"y":)" + qy + "}}";
  return ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,5,5]}],"nodes":[)" +
                    nodes + R"(],"outputs":["y"]})");
}

TensorMap Inputs(const Graph& g) {
  TensorMap in;
  for (const ValueInfo& v : g.inputs) {
    Tensor t(v.shape);
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = float((int(i) * 29) % 61 - 30) / 10;
    in[v.name] = t;
  }
  return in;
}

// Judged as a campaign judges it: integer outputs on the grid.
void ExpectGridPass(const Graph& g, const TensorMap& in, const TargetResult& r) {
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
  const OracleResult o = Compare(g, RunReference(g, in), r.outputs);
  EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
  EXPECT_GT(o.grid.compared, 0);
}

TEST(XnnpackInt8, HelloDeclaresTheQuantizedOpsAndTheChainRule) {
  INT8_OR_SKIP(t);
  EXPECT_EQ(t->caps().name, "xnnpack:int8");
  EXPECT_TRUE(t->caps().ops.count(Op::QLinearConv));
  EXPECT_TRUE(t->caps().ops.count(Op::DequantizeLinear));
}

TEST(XnnpackInt8, QdqConvChainRunsAsAQuantizedConvolutionOnTheGrid) {
  INT8_OR_SKIP(t);
  struct Case {
    std::string type;
    int zx, zy;
    bool per_channel;
    std::string act;
  };
  // qu8, qs8 and qc8 (int8 per-channel weights), with and without a clamp.
  for (const Case& c : {Case{"uint8", 128, 100, false, "Relu"}, Case{"int8", 3, -5, false, ""},
                        Case{"int8", 0, -20, true, "Relu6"}}) {
    SCOPED_TRACE(c.type + (c.per_channel ? " per channel" : "") + " " + c.act);
    const Graph g = QdqConv(c.type, c.zx, c.zy, c.per_channel, c.act);
    const TensorMap in = Inputs(g);
    const TargetResult fused = t->Run(g, in, RunRequest{});
    ExpectGridPass(g, in, fused);
    ASSERT_FALSE(fused.rewrites.empty());
    EXPECT_EQ(fused.rewrites[0].rule, "quantized-convolution-from-qdq");
    // Unfused: the chain's float ops with converts, and nothing reported.
    RunRequest unfused;
    unfused.optimize = false;
    const TargetResult plain = t->Run(g, in, unfused);
    ExpectGridPass(g, in, plain);
    EXPECT_TRUE(plain.rewrites.empty());
    RunRequest withheld;
    withheld.opt.disable = {"quantized-convolution-from-qdq"};
    const TargetResult w = t->Run(g, in, withheld);
    ExpectGridPass(g, in, w);
    for (const Rewrite& rw : w.rewrites) EXPECT_NE(rw.rule, "quantized-convolution-from-qdq");
  }
}

// Integer graph inputs -> QLinearConv (+ Relu) and QLinearAdd of its output with another input.
Graph QLinear(const std::string& wq, const std::string& conv_inputs, const std::string& extra) {
  const std::string w = List(2 * 2 * 9, [](int i) { return float((i * 53) % 200 - 100); });
  return ParseGraph(
      R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,4,4]},{"name":"r","shape":[1,2,4,4]}],
    "nodes":[
     {"name":"qc","op":"QLinearConv","inputs":[)" +
      conv_inputs + R"(],"outputs":["c"],
      "attrs":{"pads":[1,1,1,1]},
      "params":{"W":{"shape":[2,2,3,3],"data":[)" +
      w + R"(]},"B":{"shape":[2],"data":[500,-300]}},
      "epilogue":[)" +
      extra + R"({"kind":"activation","op":"Relu"}],
      "quant":{"x":{"type":"uint8","scale":[0.05],"zero_point":[120]},"w":)" +
      wq + R"(,
               "y":{"type":"uint8","scale":[0.5],"zero_point":[10]})" +
      (extra.empty() ? "" : R"(,"r":{"type":"uint8","scale":[0.1],"zero_point":[7]})") + R"(}},
     {"name":"qa","op":"QLinearAdd","inputs":["c","r"],"outputs":["y"],"attrs":{"activation":"relu"},
      "quant":{"a":{"type":"uint8","scale":[0.5],"zero_point":[10]},
               "b":{"type":"uint8","scale":[0.1],"zero_point":[7]},
               "y":{"type":"uint8","scale":[0.4],"zero_point":[3]}}}],
    "outputs":["y"]})");
}

TensorMap IntegerInputs(const Graph& g) {
  TensorMap in;
  for (const ValueInfo& v : g.inputs) {
    Tensor t(v.shape);
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = float((int(i) * 41 + 7) % 256);
    in[v.name] = t;
  }
  return in;
}

TEST(XnnpackInt8, QLinearConvAndQLinearAddRunOnTheGrid) {
  INT8_OR_SKIP(t);
  const Graph g = QLinear(R"({"type":"int8","scale":[0.01],"zero_point":[0]})", R"("x")", "");
  const TensorMap in = IntegerInputs(g);
  ExpectGridPass(g, in, t->Run(g, in, RunRequest{}));
}

// The campaign's crash (fuzz --quant --seed 1, case 3057, minimized): one DequantizeLinear feeds
// two DQ -> Conv -> Q chains. Both fused, nothing read its float value, and XNNPACK asserted
// `output_data != NULL` setting up its convert; withheld one at a time, the other chain's conv
// reads it. `dq_out`: the DQ's value is also a graph output, which must still be written.
Graph SharedDq(bool dq_out) {
  auto chain = [](const std::string& k, const char* w, const char* sw, const char* sy) {
    return R"({"name":"conv)" + k + R"(","op":"Conv","inputs":["xd"],"outputs":["c)" + k +
           R"("],"params":{"W":{"shape":[2,2,1,1],"data":[)" + w + R"(]}},
       "quant":{"W":{"type":"int8","scale":[)" +
           sw + R"(],"zero_point":[0]}}},
     {"name":"q)" +
           k + R"(","op":"QuantizeLinear","inputs":["c)" + k + R"("],"outputs":["y)" + k +
           R"("],"quant":{"y":{"type":"int8","scale":[)" + sy + R"(],"zero_point":[0]}}})";
  };
  return ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,2,2]}],
    "nodes":[
     {"name":"dq","op":"DequantizeLinear","inputs":["x"],"outputs":["xd"],
      "quant":{"x":{"type":"int8","scale":[2],"zero_point":[0]}}},)" +
                    chain("0", "0.25,-0.5,0.75,1", "0.015625", "0.25") + "," +
                    chain("1", "-1,0.5,0.25,0.75", "0.0078125", "0.125") +
                    R"(],"outputs":["y0","y1")" + (dq_out ? R"(,"xd")" : "") + "]}");
}

TEST(XnnpackInt8, OneDequantizeFeedingTwoFusedChains) {
  INT8_OR_SKIP(t);
  for (bool dq_out : {false, true}) {
    SCOPED_TRACE(dq_out ? "DQ value also an output" : "DQ value internal");
    const Graph g = SharedDq(dq_out);
    TensorMap in;
    in["x"] = Tensor({1, 2, 2, 2});
    in["x"].data = {-3, 7, 0, 1, 5, -8, 2, -1};
    const TargetResult fused = t->Run(g, in, RunRequest{});
    ExpectGridPass(g, in, fused);
    EXPECT_EQ(fused.rewrites.size(), 2u);
    for (int64_t limit : {0, 1}) {
      RunRequest bisect;
      bisect.opt.bisect_limit = limit;
      ExpectGridPass(g, in, t->Run(g, in, bisect));
    }
  }
}

TEST(XnnpackInt8, DeclinesWhatXnnpackCannotExpressWithTheReason) {
  INT8_OR_SKIP(t);
  // uint8 activations with per-channel weights: XNNPACK 2022-02 has no per-channel qu8.
  const Graph pc =
      QLinear(R"({"type":"int8","scale":[0.01,0.02],"zero_point":[0,0],"axis":0})", R"("x")", "");
  TargetResult r = t->Run(pc, IntegerInputs(pc), RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("per-channel"), std::string::npos) << r.message;
  // A residual QLinearConv would round twice through an add2.
  const Graph res = QLinear(R"({"type":"int8","scale":[0.01],"zero_point":[0]})", R"("x","r")",
                            R"({"kind":"add","input":1},)");
  r = t->Run(res, IntegerInputs(res), RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("residual"), std::string::npos) << r.message;
  // The fp32 mode declines quantized ops.
  std::unique_ptr<Target> fp32 = MakeExecTarget(*BuiltinTargetCommand("xnnpack:fp32"), {});
  const Graph g = QdqConv("uint8", 128, 100, false, "");
  EXPECT_EQ(fp32->Run(g, Inputs(g), RunRequest{}).status, RunStatus::kUnsupported);
}

}  // namespace
}  // namespace fusefuzz
