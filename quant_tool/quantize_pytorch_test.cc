// `quantize --flavor pytorch` (issue 43, item 3): the quantization points PyTorch's eager and FX
// post-training flows use, so that the PyTorch modes accept the model (docs/quantization.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "quant_tool/quantize.h"

namespace fusefuzz {
namespace {

Tensor Ramp(Shape shape, float step) {
  Tensor t(std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i) {
    t.data[i] = step * static_cast<float>(static_cast<int>((i * 7919) % 23) - 11);
  }
  return t;
}

Node MakeNode(Op op, const std::string& name, std::vector<std::string> in) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.output = name;
  return n;
}

// x -> Conv -> Relu -> GlobalAvgPool -> Flatten -> Gemm (nn.Linear): a classifier's tail.
Graph Classifier() {
  Graph g;
  g.inputs.push_back({"x", {1, 3, 4, 4}});
  Node conv = MakeNode(Op::Conv, "conv", {"x"});
  conv.params["W"] = Ramp({4, 3, 1, 1}, 0.05f);
  g.nodes.push_back(conv);
  g.nodes.push_back(MakeNode(Op::Relu, "relu", {"conv"}));
  g.nodes.push_back(MakeNode(Op::GlobalAvgPool, "pool", {"relu"}));
  Node flat = MakeNode(Op::Flatten, "flat", {"pool"});
  flat.attrs["axis"] = int64_t{1};
  g.nodes.push_back(flat);
  Node fc = MakeNode(Op::Gemm, "fc", {"flat"});
  fc.attrs["transB"] = int64_t{1};
  fc.params["B"] = Ramp({5, 4}, 0.1f);
  fc.params["C"] = Ramp({5}, 0.01f);
  g.nodes.push_back(fc);
  g.outputs = {"fc"};
  return g;
}

std::vector<std::string> Ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.emplace_back(OpName(n.op));
  return ops;
}

QuantizeOptions Torch() {
  QuantizeOptions o;
  o.flavor = QuantizeFlavor::kPyTorch;
  return o;
}

TEST(QuantizePyTorch, PutsTheQuantizationPointsWherePyTorchsFlowsDo) {
  QuantizeSummary sum;
  const Graph q = QuantizeStatic(Classifier(), Torch(), &sum);
  // The pool on the ReLU's grid, Flatten on its integers, the Linear's input (that grid), and
  // its output quantized then dequantized (the DeQuantStub): the graph output is that DQ.
  EXPECT_EQ(Ops(q), (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "Conv", "Relu",
                                              "QuantizeLinear", "DequantizeLinear", "GlobalAvgPool",
                                              "QuantizeLinear", "Flatten", "DequantizeLinear",
                                              "Gemm", "QuantizeLinear", "DequantizeLinear"}));
  EXPECT_EQ(q.nodes[7].quant.at("y"), q.nodes[4].quant.at("y"));  // the pool shares the grid
  EXPECT_EQ(q.nodes[8].inputs[0], q.nodes[7].output);             // Flatten of the integers
  EXPECT_EQ(q.outputs, std::vector<std::string>{q.nodes[12].output});
  EXPECT_EQ(sum.convs, 1);
  EXPECT_EQ(sum.gemms, 1);
  // The ONNX Runtime flavor leaves the pool, Flatten and Gemm in float.
  EXPECT_EQ(Ops(QuantizeStatic(Classifier(), {})).back(), "Gemm");
}

// per_channel_symmetric qint8: scale max|W[m]| / 127.5, integers in [-128, 127] (the largest
// weight lands on 127.5 and rounds to 128, clamped to 127); the Linear's along its output rows.
TEST(QuantizePyTorch, WeightsArePerChannelSymmetricOver127Point5) {
  const Graph f = Classifier();
  const Graph q = QuantizeStatic(f, Torch());
  const Node& fc = *q.FindNode("fc");
  const QuantParams& qb = fc.quant.at("B");
  EXPECT_EQ(qb.axis, 0);
  ASSERT_EQ(qb.scale.size(), 5u);
  const Tensor& b = f.FindNode("fc")->params.at("B");
  for (size_t m = 0; m < 5; ++m) {
    double amax = 0;
    for (size_t k = 0; k < 4; ++k) amax = std::max(amax, std::fabs(double(b.data[m * 4 + k])));
    EXPECT_EQ(qb.scale[m], double(float(amax) / 127.5f)) << m;
    for (size_t k = 0; k < 4; ++k) {
      const double i = double(fc.params.at("B").data[m * 4 + k]) / qb.scale[m];
      EXPECT_NEAR(i, std::nearbyint(i), 1e-3);
      EXPECT_GE(i, -128.5);
      EXPECT_LE(i, 127.5);
    }
  }
  EXPECT_EQ(q.FindNode("conv")->quant.at("W").axis, 0);
  EXPECT_FALSE(fc.quant.count("C"));  // the Linear's bias stays float, as PyTorch keeps it
}

TEST(QuantizePyTorch, OnnxRoundTripKeepsTheLinearsGrid) {
  const Graph q = QuantizeStatic(Classifier(), Torch());
  const Graph back = ImportOnnx(ExportOnnx(q).bytes, "quantized.onnx");
  EXPECT_EQ(Ops(back), Ops(q));
  EXPECT_EQ(back.FindNode("fc")->quant.at("B"), q.FindNode("fc")->quant.at("B"));
}

TEST(QuantizePyTorch, RefusesOnnxRuntimesReducedRange) {
  QuantizeOptions o = Torch();
  o.reduce_range = true;
  EXPECT_THROW(QuantizeStatic(Classifier(), o), InputError);
}

}  // namespace
}  // namespace fusefuzz
