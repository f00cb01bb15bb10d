// RefTensor::peak (docs/oracle.md, "Reduced-precision targets": range inside the graph): the
// largest exact intermediate of each element's computation, leaves and partial sums included.
#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz {
namespace {

using reftest::MakeNode;
using reftest::RunOp;
using reftest::T;

TEST(ReferencePeak, ConvCountsEveryWeightOfTheChannelAndTheSumOfTerms) {
  // 3x3 kernel, pads 1, on a 1x1 input: only the centre tap reads x; the corner weight 9e4
  // meets the zero padding only, yet an engine that pads explicitly computes 9e4 * 0.
  std::vector<float> w(9, 0.0f);
  w[0] = 9e4f;
  w[4] = 2.0f;
  Node n =
      MakeNode(Op::Conv, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {{"W", T({1, 1, 3, 3}, w)}});
  const RefTensor y = RunOp(n, {T({1, 1, 1, 1}, {3})});
  EXPECT_DOUBLE_EQ(y.value[0], 6);
  EXPECT_DOUBLE_EQ(y.peak[0], 9e4);
}

TEST(ReferencePeak, PoolsAndNormsKeepTheirPartialSums) {
  const RefTensor avg = RunOp(MakeNode(Op::GlobalAvgPool), {T({1, 1, 1, 2}, {-40000, -40000})});
  EXPECT_DOUBLE_EQ(avg.value[0], -40000);
  EXPECT_DOUBLE_EQ(avg.peak[0], 80000);
  // LayerNorm of values near 300: the sum of squares (2 * 9e4) is an intermediate.
  Node ln = MakeNode(Op::LayerNorm, {{"axis", int64_t{-1}}, {"epsilon", 1e-5}},
                     {{"scale", T({2}, {1, 1})}, {"bias", T({2}, {0, 0})}});
  const RefTensor y = RunOp(ln, {T({1, 2}, {300, -300})});
  EXPECT_NEAR(y.value[0], 1, 1e-6);
  EXPECT_DOUBLE_EQ(y.peak[0], 180000);
}

TEST(ReferencePeak, CarriesThroughDataMovementAndActivations) {
  // A leaf beyond fp16 that a MaxPool does not select still reaches the output's cone.
  Node mp = MakeNode(Op::MaxPool, {{"kernel_shape", std::vector<int64_t>{1, 2}}});
  const RefTensor m = RunOp(mp, {T({1, 1, 1, 2}, {-7e4, 1})});
  EXPECT_DOUBLE_EQ(m.value[0], 1);
  EXPECT_DOUBLE_EQ(m.peak[0], 7e4);
  const RefTensor r = RunOp(MakeNode(Op::Relu), {T({1, 1, 1, 2}, {-7e4, 1})});
  EXPECT_DOUBLE_EQ(r.value[0], 0);
  EXPECT_DOUBLE_EQ(r.peak[0], 7e4);
  EXPECT_DOUBLE_EQ(r.peak[1], 1);
}

TEST(ReferencePeak, GemmCountsAlphaAndTheDotProductBeforeIt) {
  Node g = MakeNode(Op::Gemm, {{"alpha", 1e-3}}, {{"B", T({2, 1}, {300, 300})}});
  const RefTensor y = RunOp(g, {T({1, 2}, {200, 200})});
  EXPECT_NEAR(y.value[0], 120, 1e-3);
  EXPECT_DOUBLE_EQ(y.peak[0], 120000);  // 200 * 300 * 2 before alpha
}

}  // namespace
}  // namespace fusefuzz
