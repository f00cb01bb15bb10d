// Reference normalizations against hand-computed values, and their magnitudes.
#include <cmath>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

constexpr double kTol = 1e-14;

ParamMap BnParams(std::vector<float> scale, std::vector<float> bias, std::vector<float> mean,
                  std::vector<float> var) {
  const int64_t c = static_cast<int64_t>(scale.size());
  return {{"scale", T({c}, scale)},
          {"bias", T({c}, bias)},
          {"mean", T({c}, mean)},
          {"var", T({c}, var)}};
}

TEST(RefNorm, BatchNormAndItsMagnitude) {
  // sigma = sqrt(var + 0) = [2, 0.5]; s = scale/sigma = [1, -2].
  Node n =
      MakeNode(Op::BatchNorm, {{"epsilon", 0.0}}, BnParams({2, -1}, {0.5f, 1}, {1, 2}, {4, 0.25f}));
  RefTensor y = RunOp(n, {T({1, 2, 1, 2}, {1, 2, 3, 4})});
  ExpectValues(y, {1, 2, 1, 2}, {0.5, 1.5, -1, -3});
  // m = |s|*m_x + |s*mean| + |bias|: ch0 1*1+1+0.5, 1*2+1+0.5; ch1 2*3+4+1, 2*4+4+1.
  ExpectMags(y, {2.5, 3.5, 11, 13});
}

TEST(RefNorm, BatchNormEpsilonAndRankTwo) {
  // var + eps = [4, 1]: eps is inside the sqrt.
  Node n = MakeNode(Op::BatchNorm, {{"epsilon", 1.0}}, BnParams({1, 1}, {0, 0}, {0, 0}, {3, 0}));
  ExpectValues(RunOp(n, {T({1, 2, 1, 2}, {2, 4, 3, 5})}), {1, 2, 1, 2}, {1, 2, 3, 5});
  // Rank 2: the channel is dim 1.
  Node r2 = MakeNode(Op::BatchNorm, {{"epsilon", 0.0}}, BnParams({1, 1}, {0, 0}, {1, 2}, {1, 4}));
  ExpectValues(RunOp(r2, {T({2, 2}, {1, 2, 3, 4})}), {2, 2}, {0, 0, 2, 1});
}

TEST(RefNorm, LayerNormAxis1) {
  // Each batch's 4 elements are normalized together; scale/bias have shape [2,2].
  Node n = MakeNode(Op::LayerNorm, {{"axis", int64_t{1}}, {"epsilon", 0.0}},
                    {{"scale", T({2, 2}, {1, 2, 3, 4})}, {"bias", T({2, 2}, {0, 0, 0, 1})}});
  RefTensor y = RunOp(n, {T({2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 14})});
  const double s0 = std::sqrt(1.25), s1 = std::sqrt(3.0);
  ExpectValues(y, {2, 2, 2},
               {-1.5 / s0, -0.5 / s0 * 2, 0.5 / s0 * 3, 1.5 / s0 * 4 + 1, -1 / s1, -1 / s1 * 2,
                -1 / s1 * 3, 3 / s1 * 4 + 1},
               kTol);
  // m = |scale|*(m_x + mean m_x)/sigma + |bias| + |r| + |scale|*|x - mean|/sigma * v, with
  // v = (E[m^2] + E[m]^2)/sigma^2 the relative error scale of a one-pass variance; mean |x| of
  // batch 0 is 2.5, E[x^2] 7.5, so v0 = (7.5 + 6.25)/1.25 = 11; batch 1: (124 + 121)/3.
  const double v0 = 11, v1 = 245.0 / 3;
  EXPECT_NEAR(y.mag[0], (1 + 2.5) / s0 + 1.5 / s0 + 1.5 / s0 * v0, kTol);
  EXPECT_NEAR(y.mag[3], 4 * (4 + 2.5) / s0 + 1 + std::fabs(y.value[3]) + 4 * 1.5 / s0 * v0, kTol);
  EXPECT_NEAR(y.mag[7], 4 * (14 + 11) / s1 + 1 + std::fabs(y.value[7]) + 4 * 3 / s1 * v1, 1e-12);
}

TEST(RefNorm, LayerNormAxis2AndNegativeAxis) {
  // Rows of 2: eps 0.75 makes sigma of [1,2] exactly 1.
  ParamMap p = {{"scale", T({2}, {1, -1})}, {"bias", T({2}, {0, 0.5f})}};
  const Tensor x = T({2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 14});
  const double s = std::sqrt(4.75);
  const std::vector<double> want = {-0.5, 0, -0.5, 0, 0, 0.5, -2 / s, -2 / s + 0.5};
  Node n = MakeNode(Op::LayerNorm, {{"axis", int64_t{2}}, {"epsilon", 0.75}}, p);
  ExpectValues(RunOp(n, {x}), {2, 2, 2}, want, kTol);
  Node neg = MakeNode(Op::LayerNorm, {{"axis", int64_t{-1}}, {"epsilon", 0.75}}, p);
  ExpectValues(RunOp(neg, {x}), {2, 2, 2}, want, kTol);
}

TEST(RefNorm, GroupNormOneGroup) {
  Node n = MakeNode(Op::GroupNorm, {{"num_groups", int64_t{1}}, {"epsilon", 0.0}},
                    {{"scale", T({2}, {1, 2})}, {"bias", T({2}, {0, 1})}});
  const double s = std::sqrt(1.25);
  ExpectValues(RunOp(n, {T({1, 2, 1, 2}, {1, 2, 3, 4})}), {1, 2, 1, 2},
               {-1.5 / s, -0.5 / s, 0.5 / s * 2 + 1, 1.5 / s * 2 + 1}, kTol);
}

TEST(RefNorm, GroupNormTwoGroupsOfTwoChannels) {
  Node n = MakeNode(Op::GroupNorm, {{"num_groups", int64_t{2}}, {"epsilon", 0.0}},
                    {{"scale", T({4}, {1, 2, 3, 4})}, {"bias", T({4}, {0, 0, 0, 1})}});
  ExpectValues(RunOp(n, {T({1, 4, 1, 1}, {1, 3, 10, 14})}), {1, 4, 1, 1}, {-1, 2, -3, 5}, kTol);
}

TEST(RefNorm, GroupNormWithCGroupsIsInstanceNorm) {
  // Batch 2 checks that each (n, c) gets its own statistics.
  const Tensor x = T({2, 2, 1, 2}, {1, 3, 10, 14, 2, 6, 0, 8});
  ParamMap p = {{"scale", T({2}, {1, 2})}, {"bias", T({2}, {0, 1})}};
  const std::vector<double> want = {-1, 1, -1, 3, -1, 1, -1, 3};
  Node gn = MakeNode(Op::GroupNorm, {{"num_groups", int64_t{2}}, {"epsilon", 0.0}}, p);
  RefTensor a = RunOp(gn, {x});
  ExpectValues(a, {2, 2, 1, 2}, want, kTol);
  Node in = MakeNode(Op::InstanceNorm, {{"epsilon", 0.0}}, p);
  RefTensor b = RunOp(in, {x});
  ExpectValues(b, {2, 2, 1, 2}, want, kTol);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.mag, b.mag);
  // Channel 0 of batch 0: sigma 1, mean |x| 2: m = (1 + 2)/1 + 0 + 1, (3 + 2)/1 + 0 + 1, plus
  // the one-pass variance term 1 * (E[x^2] + E[x]^2)/sigma^2 = 5 + 4.
  EXPECT_NEAR(a.mag[0], 4 + 9, kTol);
  EXPECT_NEAR(a.mag[1], 6 + 9, kTol);
}

TEST(RefNorm, CancellationShowsAsLargeMagnitude) {
  // [1000, 1001]: sigma 0.5 against |x| ~ 1000, so float32 inputs' rounding is amplified 2000x,
  // and a one-pass variance E[x^2] - E[x]^2 (~1e6 - 1e6 = 0.25) by 8e6.
  Node n = MakeNode(Op::InstanceNorm, {{"epsilon", 0.0}},
                    {{"scale", T({1}, {1})}, {"bias", T({1}, {0})}});
  RefTensor y = RunOp(n, {T({1, 1, 1, 2}, {1000, 1001})});
  ExpectValues(y, {1, 1, 1, 2}, {-1, 1}, kTol);
  const double one_pass = (1001000.5 + 1000.5 * 1000.5) / 0.25;
  ExpectMags(y, {(1000 + 1000.5) / 0.5 + 1 + one_pass, (1001 + 1000.5) / 0.5 + 1 + one_pass}, 1e-6);
}

TEST(RefNorm, ZeroVarianceWithoutEpsilonIsNan) {
  Node n = MakeNode(Op::InstanceNorm, {{"epsilon", 0.0}},
                    {{"scale", T({1}, {1})}, {"bias", T({1}, {0})}});
  RefTensor y = RunOp(n, {T({1, 1, 1, 2}, {3, 3})});
  EXPECT_TRUE(std::isnan(y.value[0]));
  EXPECT_TRUE(std::isnan(y.mag[0]));
}

}  // namespace
}  // namespace fusefuzz::reftest
