#include <gtest/gtest.h>

#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "qdq-conv-bn-fold";

// The QDQ conv chain with a BN between the conv and the Q.
Graph ConvBnQ(Rng& rng, QConvSpec s = {}) {
  Graph g = QConvGraph(rng, s);
  g.nodes.insert(g.nodes.end() - 1, MakeBn(rng, "bn", "c", "b", s.m));
  g.nodes.back().inputs = {"b"};
  return g;
}

TEST(QdqConvBnFold, ResnapsTheWeightGridPerChannelAndKeepsTheIntegers) {
  Rng rng(1);
  Graph g = ConvBnQ(rng);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(CountOp(r.graph, Op::BatchNorm), 0);
  const Node& conv = r.graph.nodes[2];
  ASSERT_EQ(conv.op, Op::Conv);
  EXPECT_EQ(conv.output, "b");
  std::vector<double> s, t;
  ASSERT_EQ(BnAffine(g.nodes[3], &s, &t), "");
  const QuantParams& w = conv.quant.at("W");
  ASSERT_EQ(w.axis, 0);
  const Tensor& W0 = g.nodes[2].params.at("W");
  const Tensor& W1 = conv.params.at("W");
  const int64_t per = W0.size() / 3;
  for (int64_t i = 0; i < W0.size(); ++i) {
    const size_t m = size_t(i / per);
    EXPECT_EQ(w.scale[m],
              double(float(g.nodes[2].quant.at("W").Scale(0 + int64_t(m)) * std::fabs(s[m]))));
    // The real value is W * s up to float32 rounding.
    EXPECT_NEAR(W1.data[size_t(i)], W0.data[size_t(i)] * s[m], 1e-6 * std::fabs(s[m]) + 1e-7);
  }
  // The bias is on the grid s_x * s_w', within half a bias step of B * s + t.
  const QuantParams& b = conv.quant.at("B");
  const std::vector<double> B0 = ParamAsDouble(g.nodes[2], "B");
  for (size_t m = 0; m < 3; ++m) {
    EXPECT_EQ(b.scale[m], double(float(0.05f * w.scale[m])));
    EXPECT_LE(std::fabs(conv.params.at("B").data[m] - (B0[m] * s[m] + t[m])),
              0.5 * b.scale[m] * 1.0001);
  }
  // Then the whole chain becomes one QLinearConv.
  EXPECT_EQ(CountOp(Optimize(g).graph, Op::QLinearConv), 1);
}

TEST(QdqConvBnFold, NegativeBnScaleNegatesTheIntegers) {
  Rng rng(2);
  Graph g = ConvBnQ(rng);
  g.nodes[3].params["scale"].data = {-1.5f, 0.5f, -0.25f};
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  for (double sc : r.graph.nodes[2].quant.at("W").scale) EXPECT_GT(sc, 0);
}

TEST(QdqConvBnFold, RefusesAZeroBnScale) {
  Rng rng(3);
  Graph g = ConvBnQ(rng);
  g.nodes[3].params["scale"].data = {1.0f, 0.0f, 1.0f};
  ExpectNoFire(g, kRule);
}

TEST(QdqConvBnFold, RefusesAnUndeclaredWeight) {
  Rng rng(4);
  QConvSpec s;
  s.declare_w = false;
  s.declare_b = false;
  ExpectNoFire(ConvBnQ(rng, s), kRule);
}

TEST(QdqConvBnFold, RefusesAWeightGridWithAZeroPoint) {
  Rng rng(5);
  QConvSpec s;
  s.weight_zero_point = 1;
  s.bias = false;
  ExpectNoFire(ConvBnQ(rng, s), kRule);
}

TEST(QdqConvBnFold, RefusesAConvOutputUsedElsewhere) {
  Rng rng(6);
  Graph g = ConvBnQ(rng);
  g.outputs.push_back("c");
  ExpectNoFire(g, kRule);
}

TEST(QdqConvBnFold, RefusesANegatedMinus128) {
  Rng rng(7);
  Graph g = ConvBnQ(rng);
  Node& conv = g.nodes[2];
  conv.params["W"].data[0] = DequantizeOnnx(-128, float(conv.quant.at("W").scale[0]), 0);
  g.nodes[3].params["scale"].data[0] = -1.0f;
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
