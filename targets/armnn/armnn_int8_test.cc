// `armnn:int8` through the protocol (targets/armnn/README.md, "armnn:int8"): QuantizeLinear /
// DequantizeLinear layers, QLinearConv as a quantized Convolution2d (+ activation) and
// QLinearAdd as a quantized Addition on CpuRef, judged on the integer grid; refusals with the
// reason. Skipped when CMake did not find libarmnn-dev.
#include <gtest/gtest.h>

#include <string>

#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "targets/builtin_targets.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

std::unique_ptr<Target> ArmnnInt8() {
  try {
    TargetSettings s;
    s.timeout_seconds = 30;
    return MakeExecTarget(*BuiltinTargetCommand("armnn:int8"), s);
  } catch (const InputError& e) {
    return nullptr;
  }
}

#define ARMNN_INT8_OR_SKIP(t)              \
  std::unique_ptr<Target> t = ArmnnInt8(); \
  if (!t) GTEST_SKIP() << "armnn target not built (libarmnn-dev missing)"

// Integer inputs x, r -> QLinearConv (WQ weights, + Relu) -> QLinearAdd(relu) with r -> y.
Graph QLinear(const std::string& type, const std::string& wq, int zx) {
  std::string w;
  for (int i = 0; i < 36; ++i) w += (i ? "," : "") + std::to_string((i * 53) % 200 - 100);
  const std::string q = [&](double s, int z) {
    return R"({"type":")" + type + R"(","scale":[)" + std::to_string(s) + R"(],"zero_point":[)" +
           std::to_string(z) + "]}";
  }(0.5, 10);
  const std::string qx =
      R"({"type":")" + type + R"(","scale":[0.05],"zero_point":[)" + std::to_string(zx) + "]}";
  const std::string qr = R"({"type":")" + type + R"(","scale":[0.1],"zero_point":[7]})";
  const std::string qy = R"({"type":")" + type + R"(","scale":[0.4],"zero_point":[3]})";
  return ParseGraph(R"({"format":"fusefuzz-graph","version":2,
    "inputs":[{"name":"x","shape":[1,2,4,4]},{"name":"r","shape":[1,2,4,4]}],
    "nodes":[
     {"name":"qc","op":"QLinearConv","inputs":["x"],"outputs":["c"],"attrs":{"pads":[1,1,1,1]},
      "params":{"W":{"shape":[2,2,3,3],"data":[)" +
                    w + R"(]},"B":{"shape":[2],"data":[500,-300]}},
      "epilogue":[{"kind":"activation","op":"Relu"}],
      "quant":{"x":)" +
                    qx + R"(,"w":)" + wq + R"(,"y":)" + q + R"(}},
     {"name":"qa","op":"QLinearAdd","inputs":["c","r"],"outputs":["y"],"attrs":{"activation":"relu"},
      "quant":{"a":)" +
                    q + R"(,"b":)" + qr + R"(,"y":)" + qy + R"(}}],
    "outputs":["y"]})");
}

TensorMap IntegerInputs(bool int8) {
  TensorMap in;
  for (const char* v : {"x", "r"}) {
    Tensor t({1, 2, 4, 4});
    for (size_t i = 0; i < t.data.size(); ++i) {
      t.data[i] = float((int(i) * 41 + (v[0] == 'x' ? 7 : 3)) % 256 - (int8 ? 128 : 0));
    }
    in[v] = t;
  }
  return in;
}

TEST(ArmnnInt8, QLinearConvAndQLinearAddRunOnTheGrid) {
  ARMNN_INT8_OR_SKIP(t);
  EXPECT_TRUE(t->caps().ops.count(Op::QLinearAdd));
  // uint8 activations; int8 activations with per-channel weight scales.
  for (const auto& [type, wq, zx] :
       {std::tuple<std::string, std::string, int>{
            "uint8", R"({"type":"int8","scale":[0.01],"zero_point":[0]})", 120},
        std::tuple<std::string, std::string, int>{
            "int8", R"({"type":"int8","scale":[0.01,0.02],"zero_point":[0,0],"axis":0})", -8}}) {
    SCOPED_TRACE(type);
    const Graph g = QLinear(type, wq, zx);
    const TensorMap in = IntegerInputs(type == "int8");
    const TargetResult r = t->Run(g, in, RunRequest{});
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
    const OracleResult o = Compare(g, RunReference(g, in), r.outputs);
    EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
    EXPECT_GT(o.grid.informative, 0);
  }
}

TEST(ArmnnInt8, DeclinesWhatItCannotExpressWithTheReason) {
  ARMNN_INT8_OR_SKIP(t);
  // Read with other params than written: c is written at s 0.5 and read at s 0.25.
  Graph g = QLinear("uint8", R"({"type":"int8","scale":[0.01],"zero_point":[0]})", 120);
  g.nodes[1].quant["a"].scale = {0.25};
  TargetResult r = t->Run(g, IntegerInputs(false), RunRequest{});
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("one scale and offset"), std::string::npos) << r.message;
  // The float modes decline quantized ops.
  std::unique_ptr<Target> fp32 = MakeExecTarget(*BuiltinTargetCommand("armnn:fp32"), {});
  const Graph q = QLinear("uint8", R"({"type":"int8","scale":[0.01],"zero_point":[0]})", 120);
  EXPECT_EQ(fp32->Run(q, IntegerInputs(false), RunRequest{}).status, RunStatus::kUnsupported);
}

}  // namespace
}  // namespace fusefuzz
