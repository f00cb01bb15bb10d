// Reference activations at kinks and parameter edge values, Gelu both forms against values
// precomputed with Python's math module, and the activation magnitude rule.
#include <cmath>
#include <limits>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

RefTensor Act(Op op, std::vector<float> x, AttrMap attrs = {}, ParamMap params = {}) {
  const int64_t n = static_cast<int64_t>(x.size());
  return RunOp(MakeNode(op, std::move(attrs), std::move(params)), {T({1, n}, std::move(x))});
}

constexpr double kTol = 1e-14;

TEST(RefActivation, Relu) {
  RefTensor y = Act(Op::Relu, {-2, -0.0f, 0, 3});
  ExpectValues(y, {1, 4}, {0, 0, 0, 3});
  ExpectMags(y, {2, 0, 0, 6});  // 1*m_x + |r|
}

TEST(RefActivation, Relu6AndClip) {
  ExpectValues(Act(Op::Relu6, {-1, 0, 3, 6, 7}), {1, 5}, {0, 0, 3, 6, 6});
  ExpectValues(Act(Op::Clip, {-3, -1, 0.5f, 2, 5}, {{"min", -1.0}, {"max", 2.0}}), {1, 5},
               {-1, -1, 0.5, 2, 2});
  RefTensor flat = Act(Op::Clip, {-1, 1.5f, 9}, {{"min", 1.5}, {"max", 1.5}});
  ExpectValues(flat, {1, 3}, {1.5, 1.5, 1.5});
  ExpectMags(flat, {2.5, 3, 10.5});
}

TEST(RefActivation, ClipMinAboveMaxIsMaxEverywhere) {
  // ONNX: min(max(x, min), max); NaN stays NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  RefTensor t = Act(Op::Clip, {-3, 0.5f, 1.5f, 9, nan}, {{"min", 2.0}, {"max", 1.0}});
  ExpectValues(Act(Op::Clip, {-3, 0.5f, 1.5f, 9}, {{"min", 2.0}, {"max", 1.0}}), {1, 4},
               {1, 1, 1, 1});
  EXPECT_TRUE(std::isnan(t.value[4]));
}

TEST(RefActivation, LeakyReluAlphaEdges) {
  // Default alpha: 0.01 rounded to float32, as every float attribute.
  ExpectValues(Act(Op::LeakyRelu, {-100, 5}), {1, 2}, {-100 * double(0.01f), 5}, kTol);
  ExpectValues(Act(Op::LeakyRelu, {-2, 3}, {{"alpha", 0.0}}), {1, 2}, {0, 3});
  RefTensor neg = Act(Op::LeakyRelu, {-2, 0, 3}, {{"alpha", -0.5}});
  ExpectValues(neg, {1, 3}, {1, 0, 3});
  ExpectMags(neg, {3, 0, 6});  // max(1,|alpha|) = 1
  RefTensor steep = Act(Op::LeakyRelu, {-1}, {{"alpha", -2.0}});
  ExpectValues(steep, {1, 1}, {2});
  ExpectMags(steep, {4});  // L = 2: 2*1 + |2|
}

TEST(RefActivation, PReluPerChannelAndShared) {
  const Tensor x = T({1, 2, 1, 2}, {-1, 2, -3, 4});
  RefTensor per = RunOp(MakeNode(Op::PRelu, {}, {{"slope", T({2, 1, 1}, {0.5f, -2})}}), {x});
  ExpectValues(per, {1, 2, 1, 2}, {-0.5, 2, 6, 4});
  ExpectMags(per, {1.5, 4, 12, 12});  // L = max(1,|slope_c|): 1, 1, 2, 2
  RefTensor shared = RunOp(MakeNode(Op::PRelu, {}, {{"slope", T({1}, {0.25f})}}), {x});
  ExpectValues(shared, {1, 2, 1, 2}, {-0.25, 2, -0.75, 4});
  // C == W == 2: a [2] slope broadcasts along W (ONNX), not per channel as [2, 1, 1] above.
  RefTensor along_w = RunOp(MakeNode(Op::PRelu, {}, {{"slope", T({2}, {0.5f, -2})}}), {x});
  ExpectValues(along_w, {1, 2, 1, 2}, {-0.5, 2, -1.5, 4});
  ExpectMags(along_w, {1.5, 6, 4.5, 12});  // L = max(1,|slope_w|): 1, 2, 1, 2
}

TEST(RefActivation, Elu) {
  ExpectValues(Act(Op::Elu, {-1, 0, 2}), {1, 3}, {-0.6321205588285577, 0, 2}, kTol);
  RefTensor two = Act(Op::Elu, {-1}, {{"alpha", 2.0}});
  ExpectValues(two, {1, 1}, {-1.2642411176571153}, kTol);
  // L*m_x + |r| + |alpha|*exp(x): alpha*(exp(x) - 1) in float32 rounds exp(x) before it
  // cancels, so the own term is |alpha| (not |r|) for x < 0.
  ExpectMags(two, {2 + 2}, kTol);
  // Near 0 the magnitude stays |alpha|-sized while r vanishes (x = -2^-12).
  RefTensor small = Act(Op::Elu, {-0x1.0p-12f});
  EXPECT_NEAR(small.mag[0], 0x1.0p-12 + 1, kTol);
}

TEST(RefActivation, SigmoidAndTanh) {
  RefTensor s = Act(Op::Sigmoid, {0, 2, -2});
  ExpectValues(s, {1, 3}, {0.5, 0.8807970779778823, 0.11920292202211755}, kTol);
  ExpectMags(s, {0.5, 0.5 + 0.8807970779778823, 0.5 + 0.11920292202211755}, kTol);
  ExpectValues(Act(Op::Tanh, {0.5, 0, -0.5}), {1, 3},
               {0.46211715726000974, 0, -0.46211715726000974}, kTol);
}

TEST(RefActivation, HardSigmoid) {
  // Defaults alpha 0.2 (as float32), beta 0.5; saturation at both ends.
  ExpectValues(Act(Op::HardSigmoid, {-3, 0, 2, 3}), {1, 4}, {0, 0.5, 2 * double(0.2f) + 0.5, 1},
               kTol);
  ExpectValues(Act(Op::HardSigmoid, {-1, 0.5f, 2}, {{"alpha", 1.0}, {"beta", 0.0}}), {1, 3},
               {0, 0.5, 1});
  RefTensor neg = Act(Op::HardSigmoid, {-1, 0, 1}, {{"alpha", -0.5}, {"beta", 0.5}});
  ExpectValues(neg, {1, 3}, {1, 0.5, 0});
  ExpectMags(neg, {1.5, 0.5, 0.5});  // L = |alpha| = 0.5
  RefTensor flat = Act(Op::HardSigmoid, {-7, 7}, {{"alpha", 0.0}, {"beta", 0.25}});
  ExpectValues(flat, {1, 2}, {0.25, 0.25});
  ExpectMags(flat, {0.25, 0.25});  // L = 0
}

TEST(RefActivation, SiluAndHardSwish) {
  ExpectValues(Act(Op::Silu, {1, -1, 0}), {1, 3}, {0.7310585786300049, -0.2689414213699951, 0},
               kTol);
  RefTensor hs = Act(Op::HardSwish, {-4, -3, -1, 0, 1, 3, 4});
  ExpectValues(hs, {1, 7}, {0, 0, -1.0 / 3, 0, 2.0 / 3, 3, 4}, kTol);
  ExpectMags(hs, {6, 4.5, 1.5 + 1.0 / 3, 0, 1.5 + 2.0 / 3, 7.5, 10}, kTol);
}

TEST(RefActivation, GeluBothForms) {
  const std::vector<float> x = {-3, -1, 0.5f, 2, 0};
  ExpectValues(
      Act(Op::Gelu, x), {1, 5},
      {-0.00404969409489031, -0.15865525393145707, 0.34573123063700656, 1.9544997361036416, 0},
      1e-15);
  ExpectValues(
      Act(Op::Gelu, x, {{"approximate", std::string("tanh")}}), {1, 5},
      {-0.0036373920817729943, -0.15880800939172324, 0.34571400982514394, 1.954597694087775, 0},
      1e-15);
  // Far in the negative tail the result is tiny but must not be flushed by cancellation.
  RefTensor tail = Act(Op::Gelu, {-10});
  EXPECT_LT(tail.value[0], 0);
  EXPECT_NEAR(tail.value[0] / -7.619853024160593e-23, 1.0, 1e-9);
}

TEST(RefActivation, LipschitzConstantsBoundTheSlope) {
  // Magnitude check: m = L*m_x + |r| with L >= max |f'|; sample f' numerically on a fine grid.
  for (Op op : {Op::Silu, Op::Gelu, Op::HardSwish, Op::Sigmoid, Op::Tanh, Op::Elu}) {
    std::vector<float> x;
    for (int i = -800; i <= 800; ++i) x.push_back(static_cast<float>(i) / 100.0f);
    RefTensor y = Act(op, x);
    double max_slope = 0;
    for (size_t i = 1; i < x.size(); ++i) {
      max_slope = std::max(
          max_slope, std::fabs((y.value[i] - y.value[i - 1]) / (double(x[i]) - double(x[i - 1]))));
    }
    // L recovered from the magnitude at x = 1: m = L*1 + |f(1)|.
    const size_t one = 900;
    ASSERT_FLOAT_EQ(x[one], 1.0f);
    const double lipschitz = y.mag[one] - std::fabs(y.value[one]);
    EXPECT_GE(lipschitz, max_slope) << OpName(op);
    EXPECT_LE(lipschitz, max_slope * 1.01 + 1e-9) << OpName(op) << " L is not tight";
  }
}

}  // namespace
}  // namespace fusefuzz::reftest
