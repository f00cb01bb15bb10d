// The error scale sigma the reference carries beside each value (docs/oracle.md, "The sigma
// oracle"): exact inputs have none, each rounding stage adds its own, and nonlinear ops see how
// far an input error can move their output.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz {
namespace {

using reftest::MakeNode;
using reftest::RunOp;
using reftest::T;

constexpr double kU = 0x1.0p-24;

// The reference's rule for a float32 sum of n terms (ref_ops.h), restated.
double SumSigma(double n, double total, double rss) {
  return kU * std::sqrt((n + 1) / 3) * (total + rss);
}

TEST(Sigma, ExactOpsCarryNoErrorAndCopiesKeepIt) {
  const Tensor x = T({1, 1, 2, 2}, {1, -2, 3, -4});
  for (Op op : {Op::Relu, Op::Identity}) {
    const RefTensor y = RunOp(MakeNode(op), {x});
    ASSERT_EQ(y.sigma.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      // Relu rounds nothing, but its rule charges one rounding of |r| (a kernel may compute it
      // as x * (x > 0)); Identity copies the exact input.
      EXPECT_DOUBLE_EQ(y.sigma[i], op == Op::Relu ? kU * y.value[i] : 0.0) << OpName(op);
    }
  }
}

TEST(Sigma, ConvIsItsSumsRoundingThenCarriesInputErrorsByTheL2NormOfItsWeights) {
  // 1 -> 1 channel, 3x3 kernel, no pad: one output from 9 taps.
  const Tensor x = T({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Node conv = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 3, 3}, {1, -1, 1, -1, 1, -1, 1, -1, 1})}});
  const RefTensor y = RunOp(conv, {x});
  ASSERT_EQ(y.value.size(), 1u);
  double rss = 0;
  for (int i = 1; i <= 9; ++i) rss += i * i;
  EXPECT_DOUBLE_EQ(y.value[0], 5);  // 1-2+3-4+5-6+7-8+9
  EXPECT_NEAR(y.sigma[0], SumSigma(9, 5, std::sqrt(rss)), 1e-20);

  // Two stacked convs: the second carries the first's sigma by ||w||_2, not by sum |w|.
  Graph g;
  g.inputs = {{"x", {1, 1, 3, 3}}};
  Node a = conv;
  a.inputs = {"x"};
  a.output = "a";
  a.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  Node b = a;
  b.name = "second";
  b.inputs = {"a"};
  b.output = "b";
  g.nodes = {a, b};
  g.outputs = {"b"};
  const RefTensorMap all = RunReference(g, {{"x", x}}, true);
  const RefTensor& first = all.at("a");
  const RefTensor& second = all.at("b");
  // Centre element of the second conv: all 9 taps of `first` are in range, weights +-1.
  double carried = 0;
  for (double s : first.sigma) carried += s * s;
  EXPECT_GT(second.sigma[4], std::sqrt(carried));
  EXPECT_LT(second.sigma[4], std::sqrt(carried) + SumSigma(9, 1e3, 1e3));
}

TEST(Sigma, ReluNearItsKinkPassesOnTheInputErrorThatCanCrossIt) {
  // x slightly below 0, with an error scale from a conv in front of it: the candidate's x may
  // land above 0, so the Relu's output error is not 0 although f'(x) = 0.
  Graph g;
  g.inputs = {{"x", {1, 2, 1, 1}}};
  Node conv = MakeNode(Op::Conv, {}, {{"W", T({1, 2, 1, 1}, {1, -1})}});
  conv.inputs = {"x"};
  conv.output = "c";
  Node relu = MakeNode(Op::Relu);
  relu.inputs = {"c"};
  relu.output = "y";
  g.nodes = {conv, relu};
  g.outputs = {"y"};
  // 1 - (1 + 2^-22): c = -2^-22, whose sigma (about u * 2) reaches past 0 within 8 sigmas.
  const RefTensorMap all =
      RunReference(g, {{"x", T({1, 2, 1, 1}, {1.0f, 1.0f + 0x1.0p-22f})}}, true);
  const RefTensor& c = all.at("c");
  const RefTensor& y = all.at("y");
  ASSERT_LT(c.value[0], 0);
  ASSERT_LT(-c.value[0], kSigmaProbe * c.sigma[0]) << "the input error must reach the kink";
  EXPECT_EQ(y.value[0], 0);
  EXPECT_GT(y.sigma[0], 0);
  EXPECT_LE(y.sigma[0], c.sigma[0]);

  // Far from the kink the Relu passes nothing on.
  const RefTensorMap far = RunReference(g, {{"x", T({1, 2, 1, 1}, {1.0f, 2.0f})}}, true);
  EXPECT_EQ(far.at("y").sigma[0], 0);
}

TEST(Sigma, MaxPoolTakesTheLargestErrorAmongElementsThatCanWin) {
  // Three elements within a hair of the max, one far below. After an Add each element's sigma
  // is u|r|; the element that wins in float32 may be any of the near-ties.
  Graph g;
  g.inputs = {{"x", {1, 1, 1, 4}}, {"z", {1, 1, 1, 4}}};
  Node add = MakeNode(Op::Add);
  add.inputs = {"x", "z"};
  add.output = "s";
  Node pool = MakeNode(Op::MaxPool, {{"kernel_shape", std::vector<int64_t>{1, 4}}});
  pool.inputs = {"s"};
  pool.output = "y";
  g.nodes = {add, pool};
  g.outputs = {"y"};
  const RefTensorMap all = RunReference(
      g, {{"x", T({1, 1, 1, 4}, {1, 1, -100, 1})}, {"z", T({1, 1, 1, 4}, {0, 0x1.0p-30f, 0, 0})}},
      true);
  const RefTensor& s = all.at("s");
  const RefTensor& y = all.at("y");
  EXPECT_DOUBLE_EQ(y.value[0], 1 + 0x1.0p-30);
  EXPECT_DOUBLE_EQ(y.sigma[0], std::max(s.sigma[0], s.sigma[1]));
}

TEST(Sigma, AddsInQuadratureAndMultipliesByTheOtherOperand) {
  const Tensor a = T({1, 1, 1, 2}, {3, -5});
  Node conv = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 1, 1}, {0.1f})}});
  Graph g;
  g.inputs = {{"a", {1, 1, 1, 2}}};
  conv.inputs = {"a"};
  conv.output = "c";
  Node mul = MakeNode(Op::Mul, {}, {{"B", T({1}, {4})}});
  mul.inputs = {"c"};
  mul.output = "m";
  g.nodes = {conv, mul};
  g.outputs = {"m"};
  const RefTensorMap all = RunReference(g, {{"a", a}}, true);
  const RefTensor& c = all.at("c");
  const RefTensor& m = all.at("m");
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(m.sigma[i], std::hypot(4 * c.sigma[i], kU * std::fabs(m.value[i])), 1e-22);
  }
}

}  // namespace
}  // namespace fusefuzz
