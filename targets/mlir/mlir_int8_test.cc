// `mlir:int8`'s integer operators through the protocol (targets/mlir/README.md): QLinearConv as
// an i8 conv2d / depthwise_conv2d / grouped conv2d with input_zp, an i32 accumulator and a
// per-channel RESCALE, judged on the integer grid on the unoptimized and the optimized run;
// every integer within the rounding itself of the reference; the module accepted by TOSA's
// validator; and the UB rules declined per node with the reason. Skipped when CMake did not
// build fusefuzz-mlir-target (mlir-22-tools missing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "targets/builtin_targets.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

std::unique_ptr<Target> MlirInt8() {
  try {
    TargetSettings s;
    s.timeout_seconds = 60;
    return MakeExecTarget(*BuiltinTargetCommand("mlir:int8"), s);
  } catch (const InputError& e) {
    return nullptr;
  }
}

#define MLIR_INT8_OR_SKIP(t)              \
  std::unique_ptr<Target> t = MlirInt8(); \
  if (!t) GTEST_SKIP() << "mlir target not built (mlir-22-tools missing)"

std::string Quant(const std::string& type, double s, int z) {
  return R"({"type":")" + type + R"(","scale":[)" + std::to_string(s) + R"(],"zero_point":[)" +
         std::to_string(z) + "]}";
}

std::string Ints(int n, int mod, int shift, int mult = 53) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string((i * mult) % mod - shift);
  return s;
}

// x (float) -> Q -> three QLinearConvs on it: plain 3x3 (strided, padded, Relu), depthwise
// (Relu6) and grouped by 2 (Clip), `wq` their weight parameters (per tensor or per channel).
Graph Convs(const std::string& type, int zx, const std::string& wq4) {
  const std::string qx = Quant(type, 0.05, zx);
  auto conv = [&](const std::string& name, const std::string& attrs, const std::string& wshape,
                  int wn, const std::string& act, const std::string& yq) {
    return R"({"name":")" + name + R"(","op":"QLinearConv","inputs":["q"],"outputs":[")" + name +
           R"("],"attrs":)" + attrs + R"(,"params":{"W":{"shape":)" + wshape + R"(,"data":[)" +
           Ints(wn, 255, 127) + R"(]},"B":{"shape":[4],"data":[900,-300,0,4097]}},)" +
           R"("epilogue":[{"kind":"activation",)" + act + R"(}],"quant":{"x":)" + qx + R"(,"w":)" +
           wq4 + R"(,"y":)" + yq + "}}";
  };
  return ParseGraph(
      R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,4,7,6]}],
    "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["q"],"quant":{"y":)" +
      qx + "}}," +
      conv("c1", R"({"strides":[2,1],"pads":[1,0,1,2]})", "[4,4,3,3]", 144, R"("op":"Relu")",
           Quant(type, 0.3, type == "uint8" ? 100 : -20)) +
      "," +
      conv("c2", R"({"group":4,"pads":[1,1,1,1],"dilations":[1,2]})", "[4,1,3,3]", 36,
           R"("op":"Relu6")", Quant(type, 0.07, type == "uint8" ? 5 : -100)) +
      "," +
      conv("c3", R"({"group":2})", "[4,2,1,1]", 8, R"("op":"Clip","attrs":{"min":-1.5,"max":2.25})",
           Quant("int8", 0.02, 3)) +
      R"(],"outputs":["c1","c2","c3"]})");
}

TensorMap FloatInputs(const Graph& g) {
  TensorMap in;
  Tensor t(g.inputs[0].shape);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = float((int(i) * 37) % 101 - 50) * 0.09f;
  in[g.inputs[0].name] = t;
  return in;
}

RunRequest Request(bool optimize) {
  RunRequest r;
  r.optimize = optimize;
  r.opt.disable = {"affine-loop-fusion"};  // its own upstream bug (docs/upstream-bugs.md)
  return r;
}

TEST(MlirInt8, QLinearConvPlainDepthwiseGroupedOnTheGrid) {
  MLIR_INT8_OR_SKIP(t);
  EXPECT_TRUE(t->caps().ops.count(Op::QLinearConv));
  for (const auto& [type, zx, wq] :
       {std::tuple<std::string, int, std::string>{"uint8", 120, Quant("int8", 0.01, 0)},
        std::tuple<std::string, int, std::string>{
            "int8", -8,
            R"({"type":"int8","scale":[0.01,0.02,0.003,0.05],"zero_point":[0,0,0,0],"axis":0})"}}) {
    SCOPED_TRACE(type);
    const Graph g = Convs(type, zx, wq);
    const TensorMap in = FloatInputs(g);
    const RefTensorMap ref = RunReference(g, in, false, QuantizeRounding::kReciprocalMultiply);
    for (bool optimize : {false, true}) {
      SCOPED_TRACE(optimize ? "optimized" : "unoptimized");
      const TargetResult r = t->Run(g, in, Request(optimize));
      ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
      const OracleResult o = Compare(g, ref, r.outputs);
      EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
      EXPECT_GT(o.grid.informative, 0);
      // Exact: every integer is the rounding of the reference's t (|c - t| <= 1/2, ties either
      // way), or the saturation limit beyond the range: the fixed-point multiplier errs by 2^-31.
      for (const std::string& y : g.outputs) {
        const RefTensor& want = ref.at(y);
        for (size_t i = 0; i < want.grid_t.size(); ++i) {
          const double t_in = std::clamp(want.grid_t[i], double(want.grid_qmin) - 0.5,
                                         double(want.grid_qmax) + 0.5);
          EXPECT_LE(std::fabs(r.outputs.at(y).data[i] - t_in), 0.5 + 1e-9)
              << y << "[" << i << "] t " << want.grid_t[i];
        }
      }
    }
  }
}

std::string Module(Target& t, const Graph& g, const TensorMap& in) {
  ReproducerCase c;
  c.title = "test";
  c.output = g.outputs[0];
  c.index = 0;
  c.reference = 1;
  c.bound = 0.5;
  c.expected[g.outputs[0]] = Tensor(RunReference(g, in).at(g.outputs[0]).shape);
  const Reproducer rep = t.AskReproducer(g, in, RunRequest{}, c);
  return rep.files.empty() ? rep.message : rep.files[0].text;
}

// The module of a quantized graph passes TOSA's validator: both 8-bit types, QuantizeLinear's
// saturation, QLinearConvs with their activations; every op inside the profiles.
TEST(MlirInt8, TheQLinearConvModulePassesTosaValidation) {
  MLIR_INT8_OR_SKIP(t);
  const Graph g = Convs("uint8", 120, Quant("int8", 0.01, 0));
  const std::string module = Module(*t, g, FloatInputs(g));
  EXPECT_NE(module.find("tosa.rescale"), std::string::npos) << module;
  const std::string dir = testing::TempDir() + "/mlir_int8_validate";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/graph.mlir") << module;
  const std::string cmd =
      "/usr/lib/llvm-22/bin/mlir-opt --tosa-attach-target='profiles=pro_int,pro_fp "
      "extensions=doubleround' --tosa-validate=strict-op-spec-alignment " +
      dir + "/graph.mlir -o /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// DQ -> Conv -> Relu6 -> Q with weights exactly on their declared grid (zero point 3): one
// integer conv (its bias rounded to int32 at s_x s_w, as the reference admits); off the grid: the
// float chain.
TEST(MlirInt8, AQdqConvChainOnItsGridRunsAsAnIntegerConv) {
  MLIR_INT8_OR_SKIP(t);
  auto graph = [](float w_scale) {
    std::string w;
    char buf[32];
    for (int i = 0; i < 36; ++i) {
      // DequantizeLinear of the integer (v + 3) in float32, written exactly (9 digits).
      std::snprintf(buf, sizeof buf, "%.9g", double(float((i * 53) % 200 - 97) * w_scale));
      w += (i ? "," : "") + std::string(buf);
    }
    return ParseGraph(
        R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,2,5,5]}],
      "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["q"],"quant":{"y":)" +
        Quant("int8", 0.05, -7) + R"(}},
       {"name":"d","op":"DequantizeLinear","inputs":["q"],"outputs":["d"],"quant":{"x":)" +
        Quant("int8", 0.05, -7) + R"(}},
       {"name":"c","op":"Conv","inputs":["d"],"outputs":["c"],"attrs":{"pads":[1,1,1,1]},
        "params":{"W":{"shape":[2,2,3,3],"data":[)" +
        w + R"(]},"B":{"shape":[2],"data":[0.3,-0.7]}},
        "quant":{"W":{"type":"int8","scale":[)" +
        std::to_string(w_scale) + R"(],"zero_point":[3]}}},
       {"name":"r","op":"Relu6","inputs":["c"],"outputs":["r"]},
       {"name":"u","op":"QuantizeLinear","inputs":["r"],"outputs":["y"],"quant":{"y":)" +
        Quant("uint8", 0.03, 4) + R"(}}],"outputs":["y"]})");
  };
  // (q - 3) * 0.0625 is exact; float32 (q - 3) * 0.1 is on ONNX's grid but not exactly a
  // multiple of 0.1f in real numbers: the float chain.
  for (const float step : {0.0625f, 0.1f}) {
    SCOPED_TRACE(step);
    const Graph g = graph(step);
    const TensorMap in = FloatInputs(g);
    const RefTensorMap ref = RunReference(g, in, false, QuantizeRounding::kReciprocalMultiply);
    for (bool optimize : {false, true}) {
      const TargetResult r = t->Run(g, in, Request(optimize));
      ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
      const OracleResult o = Compare(g, ref, r.outputs);
      EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
      EXPECT_GT(o.grid.informative, 0);
    }
    const std::string module = Module(*t, g, in);
    EXPECT_EQ(module.find("acc_type = i32") != std::string::npos, step == 0.0625f) << module;
  }
}

// DQ -> Clip -> Q and DQ -> Q (new parameters) as one RESCALE each (+ an i8 CLAMP), on the grid.
TEST(MlirInt8, RequantizationsRunAsRescales) {
  MLIR_INT8_OR_SKIP(t);
  const std::string qx = Quant("int8", 0.05, -7);
  const Graph g = ParseGraph(
      R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,2,5,5]}],
      "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["q"],"quant":{"y":)" +
      qx + R"(}},
       {"name":"d1","op":"DequantizeLinear","inputs":["q"],"outputs":["d1"],"quant":{"x":)" +
      qx +
      R"(}},
       {"name":"c","op":"Clip","inputs":["d1"],"outputs":["c"],"attrs":{"min":-0.75,"max":1.5}},
       {"name":"u1","op":"QuantizeLinear","inputs":["c"],"outputs":["y1"],"quant":{"y":)" +
      Quant("uint8", 0.013, 60) + R"(}},
       {"name":"d2","op":"DequantizeLinear","inputs":["q"],"outputs":["d2"],"quant":{"x":)" +
      qx +
      R"(}},
       {"name":"u2","op":"QuantizeLinear","inputs":["d2"],"outputs":["y2"],"quant":{"y":)" +
      Quant("int8", 0.031, 9) + R"(}}],"outputs":["y1","y2"]})");
  const TensorMap in = FloatInputs(g);
  const RefTensorMap ref = RunReference(g, in, false, QuantizeRounding::kReciprocalMultiply);
  for (bool optimize : {false, true}) {
    const TargetResult r = t->Run(g, in, Request(optimize));
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
    const OracleResult o = Compare(g, ref, r.outputs);
    EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
    EXPECT_GT(o.grid.informative, 0);
  }
  const std::string module = Module(*t, g, in);
  // The input's QuantizeLinear saturating, two requantizations, the uint8 output's widening.
  size_t rescales = 0;
  for (size_t at = module.find("tosa.rescale"); at != std::string::npos;
       at = module.find("tosa.rescale", at + 1)) {
    ++rescales;
  }
  EXPECT_EQ(rescales, 4u) << module;
  // The Clip as one CLAMP on i8.
  const size_t i8_clamp = module.find(" : i8, max_val");
  EXPECT_NE(i8_clamp, std::string::npos) << module;
  EXPECT_EQ(i8_clamp, module.rfind(" : i8, max_val")) << module;
}

// QLinearAdd (relu) of a QLinearConv's output and another quantized value, uint8 and int8.
TEST(MlirInt8, QLinearAddOnTheGrid) {
  MLIR_INT8_OR_SKIP(t);
  EXPECT_TRUE(t->caps().ops.count(Op::QLinearAdd));
  for (const std::string type : {"uint8", "int8"}) {
    SCOPED_TRACE(type);
    const std::string qx = Quant(type, 0.05, type == "uint8" ? 120 : -8);
    const std::string qc = Quant(type, 0.3, type == "uint8" ? 100 : -20);
    const Graph g = ParseGraph(
        R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,2,5,5]}],
      "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["q"],"quant":{"y":)" +
        qx + R"(}},
       {"name":"c","op":"QLinearConv","inputs":["q"],"outputs":["c"],"attrs":{"pads":[1,1,1,1]},
        "params":{"W":{"shape":[2,2,3,3],"data":[)" +
        Ints(36, 255, 127) + R"(]}},"quant":{"x":)" + qx + R"(,"w":)" + Quant("int8", 0.01, 0) +
        R"(,"y":)" + qc + R"(}},
       {"name":"a","op":"QLinearAdd","inputs":["c","q"],"outputs":["y"],
        "attrs":{"activation":"relu"},"quant":{"a":)" +
        qc + R"(,"b":)" + qx + R"(,"y":)" + Quant(type, 0.17, type == "uint8" ? 3 : -120) +
        R"(}}],"outputs":["y"]})");
    const TensorMap in = FloatInputs(g);
    const RefTensorMap ref = RunReference(g, in, false, QuantizeRounding::kReciprocalMultiply);
    for (bool optimize : {false, true}) {
      const TargetResult r = t->Run(g, in, Request(optimize));
      ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.log;
      const OracleResult o = Compare(g, ref, r.outputs);
      EXPECT_EQ(o.verdict, Verdict::kPass) << o.detail;
      EXPECT_GT(o.grid.informative, 0);
    }
  }
}

// What TOSA leaves undefined is declined per node with the rule (README, "UB rules").
TEST(MlirInt8, DeclinesWhatRescaleCannotSayWithTheRule) {
  MLIR_INT8_OR_SKIP(t);
  auto run = [&](double sx, double sw, double sy) {
    const Graph g = ParseGraph(
        R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":[1,1,2,2]}],
      "nodes":[{"name":"c","op":"QLinearConv","inputs":["x"],"outputs":["y"],
        "params":{"W":{"shape":[1,1,1,1],"data":[3]}},"quant":{"x":)" +
        Quant("int8", sx, 0) + R"(,"w":)" + Quant("int8", sw, 0) + R"(,"y":)" +
        Quant("int8", sy, 0) + R"(}}],"outputs":["y"]})");
    TensorMap in;
    in["x"] = Tensor({1, 1, 2, 2});
    return t->Run(g, in, RunRequest{});
  };
  // s_x s_w / s_y = 1e-12 < 2^-32: the shift would exceed 62.
  TargetResult r = run(1e-6, 1e-6, 1);
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("shift in [2, 62]"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("node 'c'"), std::string::npos) << r.message;
  // 2^28: shift 3, but apply_scale_32 needs the value below 2^(shift - 1).
  r = run(16384, 16384, 1);
  EXPECT_EQ(r.status, RunStatus::kUnsupported);
  EXPECT_NE(r.message.find("beyond what RESCALE defines"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace fusefuzz
