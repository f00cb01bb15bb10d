#include "quant_tool/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "onnx/import.h"

namespace fusefuzz {
namespace {

double F32(double x) { return static_cast<double>(static_cast<float>(x)); }

Tensor Ramp(Shape shape, float step, float offset) {
  Tensor t(std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i) {
    // A deterministic spread of signs and sizes (no randomness needed).
    t.data[i] = offset + step * static_cast<float>((i * 7919) % 23) - step * 11.0f;
  }
  return t;
}

Node Conv(const std::string& name, const std::string& in, const std::string& out, int64_t m,
          int64_t c, float bias) {
  Node n;
  n.name = name;
  n.op = Op::Conv;
  n.inputs = {in};
  n.output = out;
  n.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  n.params["W"] = Ramp({m, c, 3, 3}, 0.05f, 0.01f);
  Tensor b({m});
  for (int64_t i = 0; i < m; ++i) b.data[static_cast<size_t>(i)] = bias * static_cast<float>(i - 1);
  n.params["B"] = b;
  return n;
}

Node Unary(Op op, const std::string& name, const std::string& in, const std::string& out) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = {in};
  n.output = out;
  return n;
}

// x -> Conv -> Relu -> Conv -> Add(residual) -> Relu: the residual block of a ResNet.
Graph Block() {
  Graph g;
  g.inputs.push_back({"x", {1, 3, 6, 6}});
  g.nodes.push_back(Conv("c1", "x", "c1", 3, 3, 0.2f));
  g.nodes.push_back(Unary(Op::Relu, "r1", "c1", "r1"));
  g.nodes.push_back(Conv("c2", "r1", "c2", 3, 3, -0.1f));
  Node add = Unary(Op::Add, "add", "c2", "add");
  add.inputs = {"c2", "r1"};
  g.nodes.push_back(add);
  g.nodes.push_back(Unary(Op::Relu, "r2", "add", "y"));
  g.outputs = {"y"};
  return g;
}

std::vector<std::string> Ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.emplace_back(OpName(n.op));
  return ops;
}

TEST(QuantizeParams, ActivationRangeHoldsZeroAndRoundsTheZeroPoint) {
  QuantParams p = ActivationParams(-1.0, 3.0);
  EXPECT_EQ(p.type, QuantType::kUint8);
  EXPECT_EQ(p.scale[0], F32(4.0f / 255.0f));
  EXPECT_EQ(p.zero_point[0], 64);  // 1 / (4 / 255) = 63.75
  p = ActivationParams(0.5, 2.0);  // widened to [0, 2]
  EXPECT_EQ(p.scale[0], F32(2.0f / 255.0f));
  EXPECT_EQ(p.zero_point[0], 0);
  p = ActivationParams(-2.0, -1.0);  // widened to [-2, 0]
  EXPECT_EQ(p.zero_point[0], 255);
  p = ActivationParams(0.0, 0.0);  // an all-zero tensor
  EXPECT_EQ(p.scale[0], 1.0);
  EXPECT_EQ(p.zero_point[0], 0);
}

TEST(QuantizeParams, WeightsAreSymmetricPerChannelOnPlusMinus127) {
  Tensor w({2, 1, 1, 2}, {1.27f, -0.5f, 0.0f, 0.0f});
  QuantParams p = WeightParams(w);
  EXPECT_EQ(p.type, QuantType::kInt8);
  EXPECT_EQ(p.axis, 0);
  ASSERT_EQ(p.scale.size(), 2u);
  EXPECT_EQ(p.scale[0], F32(1.27f / 127.0f));
  EXPECT_EQ(p.scale[1], 1.0);  // all-zero channel
  EXPECT_EQ(p.zero_point, (std::vector<int64_t>{0, 0}));
}

TEST(QuantizeParams, ReducedRangeWeightsAreOnPlusMinus64) {
  Tensor w({1, 1, 1, 2}, {1.28f, -0.5f});
  EXPECT_EQ(WeightParams(w, true).scale[0], F32(1.28f / 64.0f));
  QuantizeOptions o;
  o.reduce_range = true;
  const Graph q = QuantizeStatic(Block(), o);
  const Node& conv = q.nodes[2];
  const Tensor& qw = conv.params.at("W");
  double kmax = 0;
  for (size_t i = 0; i < qw.data.size(); ++i) {
    const double s = conv.quant.at("W").scale[i * 3 / qw.data.size()];
    kmax = std::max(kmax, std::fabs(std::nearbyint(qw.data[i] / s)));
  }
  EXPECT_EQ(kmax, 64.0);  // every channel's largest weight reaches 64, none beyond
}

TEST(QuantizeStatic, PutsQdqWhereOnnxRuntimesToolDoes) {
  QuantizeSummary sum;
  const Graph q = QuantizeStatic(Block(), {}, &sum);
  // x, r1 (conv output after its Relu, read by c2 and the Add), c2 (an Add operand); y is the
  // graph output and stays float.
  EXPECT_EQ(Ops(q),
            (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "Conv", "Relu",
                                      "QuantizeLinear", "DequantizeLinear", "Conv",
                                      "QuantizeLinear", "DequantizeLinear", "Add", "Relu"}));
  EXPECT_EQ(sum.convs, 2);
  EXPECT_EQ(sum.activations, 3);
  EXPECT_EQ(sum.float_biases, 0);
  // Both the second conv and the Add read r1 through the same DQ.
  EXPECT_EQ(q.nodes[6].inputs[0], q.nodes[5].output);
  EXPECT_EQ(q.nodes[9].inputs, (std::vector<std::string>{q.nodes[8].output, q.nodes[5].output}));
}

TEST(QuantizeStatic, WeightsOnInt8GridsAndBiasOnSxTimesSw) {
  const Graph q = QuantizeStatic(Block(), {});
  const Node& dq = q.nodes[1];
  const Node& conv = q.nodes[2];
  const double s_x = dq.quant.at("x").scale[0];
  const QuantParams& qw = conv.quant.at("W");
  const QuantParams& qb = conv.quant.at("B");
  EXPECT_EQ(qw.type, QuantType::kInt8);
  EXPECT_EQ(qb.type, QuantType::kInt32);
  const Tensor& w = conv.params.at("W");
  const size_t per = w.data.size() / 3;
  for (size_t i = 0; i < w.data.size(); ++i) {
    const double k = std::nearbyint(w.data[i] / qw.scale[i / per]);
    EXPECT_EQ(w.data[i], static_cast<float>(qw.scale[i / per] * k)) << "weight " << i;
    EXPECT_LE(std::fabs(k), 127.0);
  }
  for (size_t m = 0; m < 3; ++m) {
    EXPECT_EQ(qb.scale[m], F32(F32(s_x) * qw.scale[m]));
    const double k = std::nearbyint(conv.params.at("B").data[m] / qb.scale[m]);
    EXPECT_EQ(conv.params.at("B").data[m], static_cast<float>(qb.scale[m] * k));
  }
}

TEST(QuantizeStatic, QuantizedModelStaysCloseToTheFloatOne) {
  const Graph g = Block();
  QuantizeOptions o;
  o.seed = 5;
  o.calibration_inputs = 1;
  const Graph q = QuantizeStatic(g, o);
  // The calibration input itself: every value inside the calibrated ranges (a seeded input of
  // another seed may be far larger: the seeded sampler varies magnitudes on purpose).
  const TensorMap in = InputsFromSeed(g, 5);
  const RefTensor yf = RunReference(g, in).at("y");
  const RefTensor yq = RunReference(q, in).at("y");
  double peak = 0, worst = 0;
  for (size_t i = 0; i < yf.value.size(); ++i) {
    peak = std::fmax(peak, std::fabs(yf.value[i]));
    worst = std::fmax(worst, std::fabs(yf.value[i] - yq.value[i]));
  }
  ASSERT_GT(peak, 0);
  // Three 8-bit roundings on the way: a few percent of the output's range, not more.
  EXPECT_LT(worst, 0.05 * peak);
  EXPECT_GT(worst, 0);  // and it really is quantized
}

TEST(QuantizeStatic, DeterministicPerSeedAndMethod) {
  QuantizeOptions o;
  o.calibration_inputs = 3;
  EXPECT_EQ(QuantizeStatic(Block(), o), QuantizeStatic(Block(), o));
  QuantizeOptions other = o;
  other.seed = 7;
  EXPECT_NE(QuantizeStatic(Block(), o), QuantizeStatic(Block(), other));
  QuantizeOptions pct = o;
  pct.method = CalibrationMethod::kPercentile;
  pct.percentile = 90;
  const Graph qp = QuantizeStatic(Block(), pct);
  const Graph qm = QuantizeStatic(Block(), o);
  // The percentile range lies inside the min/max one: a finer (or equal) step.
  EXPECT_LE(qp.nodes[0].quant.at("y").scale[0], qm.nodes[0].quant.at("y").scale[0]);
  EXPECT_LT(qp.nodes[4].quant.at("y").scale[0], qm.nodes[4].quant.at("y").scale[0]);
}

// `--calibration-data`: given inputs replace the seeded ones; the same inputs given calibrate as
// the seeds that made them, and other inputs calibrate otherwise.
TEST(QuantizeStatic, CalibratesOnGivenInputs) {
  QuantizeOptions seeded;
  seeded.seed = 4;
  seeded.calibration_inputs = 2;
  QuantizeOptions given;
  given.calibration_data = {InputsFromSeed(Block(), 4), InputsFromSeed(Block(), 5)};
  EXPECT_EQ(QuantizeStatic(Block(), given), QuantizeStatic(Block(), seeded));
  TensorMap small = InputsFromSeed(Block(), 4);
  for (auto& [name, t] : small) {
    for (float& v : t.data) v *= 0.25f;
  }
  given.calibration_data = {small};
  EXPECT_NE(QuantizeStatic(Block(), given), QuantizeStatic(Block(), seeded));
}

TEST(QuantizeStatic, IntegerOutputsEndInAQuantizeLinear) {
  QuantizeOptions o;
  o.integer_outputs = true;
  const Graph q = QuantizeStatic(Block(), o);
  ASSERT_EQ(q.outputs.size(), 1u);
  const Node* last = q.Producer(q.outputs[0]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op, Op::QuantizeLinear);
  EXPECT_EQ(last->inputs[0], "y");
}

TEST(QuantizeStatic, OnnxRoundTripKeepsTheQdqModel) {
  const Graph q = QuantizeStatic(Block(), {});
  const OnnxModel m = ExportOnnx(q);
  const Graph back = ImportOnnx(m.bytes, "quantized.onnx");
  EXPECT_EQ(Ops(back), Ops(q));
  const Node* conv = back.FindNode("c1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->quant.at("W"), q.FindNode("c1")->quant.at("W"));
  EXPECT_EQ(conv->quant.at("B"), q.FindNode("c1")->quant.at("B"));
}

TEST(QuantizeStatic, RefusesBadInputNamingIt) {
  const Graph q = QuantizeStatic(Block(), {});
  try {
    QuantizeStatic(q, {});
    FAIL() << "a quantized graph was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("already quantized"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("QuantizeLinear"), std::string::npos) << e.what();
  }
  QuantizeOptions o;
  o.calibration_inputs = 0;
  EXPECT_THROW(QuantizeStatic(Block(), o), InputError);
  o = {};
  o.method = CalibrationMethod::kPercentile;
  o.percentile = 120;
  EXPECT_THROW(QuantizeStatic(Block(), o), InputError);
  Graph relu;
  relu.inputs.push_back({"x", {1, 2}});
  relu.nodes.push_back(Unary(Op::Relu, "r", "x", "y"));
  relu.outputs = {"y"};
  try {
    QuantizeStatic(relu, {});
    FAIL() << "a graph without Conv or Add was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to quantize"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusefuzz
