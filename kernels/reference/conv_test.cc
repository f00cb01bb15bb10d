// Reference Conv against hand-computed values: borders, asymmetric pads, stride, dilation,
// groups, depthwise with multiplier 2, no bias, and the conv magnitude.
#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

std::vector<float> Iota(int count, float start = 0) {
  std::vector<float> v;
  for (int i = 0; i < count; ++i) v.push_back(start + static_cast<float>(i));
  return v;
}

TEST(RefConv, ValidWithBias) {
  // x = 1..9 (3x3), W = [[1,2],[3,4]], B = 0.5.
  Node n = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 2, 2}, {1, 2, 3, 4})}, {"B", T({1}, {0.5f})}});
  RefTensor y = RunOp(n, {T({1, 1, 3, 3}, Iota(9, 1))});
  ExpectValues(y, {1, 1, 2, 2}, {37.5, 47.5, 67.5, 77.5});
}

TEST(RefConv, AsymmetricPadsNoBias) {
  // pads top=1 right=1: the padded input is [[0,0,0],[1,2,0],[3,4,0]]. Distinct weights show
  // which tap met which element.
  Node n = MakeNode(Op::Conv, {{"pads", Ints{1, 0, 0, 1}}},
                    {{"W", T({1, 1, 2, 2}, {1, 10, 100, 1000})}});
  RefTensor y = RunOp(n, {T({1, 1, 2, 2}, {1, 2, 3, 4})});
  ExpectValues(y, {1, 1, 2, 2}, {2100, 200, 4321, 402});
}

TEST(RefConv, StrideAndDilation) {
  // x[h][w] = 5h + w on 5x5; ones 2x2 kernel.
  Node same = MakeNode(Op::Conv, {{"strides", Ints{2, 2}}, {"dilations", Ints{2, 2}}},
                       {{"W", T({1, 1, 2, 2}, {1, 1, 1, 1})}});
  ExpectValues(RunOp(same, {T({1, 1, 5, 5}, Iota(25))}), {1, 1, 2, 2}, {24, 32, 64, 72});
  // Per-axis: stride (1, 2), dilation (2, 1): y = 20*oh + 8*ow + 22.
  Node mixed = MakeNode(Op::Conv, {{"strides", Ints{1, 2}}, {"dilations", Ints{2, 1}}},
                        {{"W", T({1, 1, 2, 2}, {1, 1, 1, 1})}});
  ExpectValues(RunOp(mixed, {T({1, 1, 5, 5}, Iota(25))}), {1, 1, 3, 2}, {22, 30, 42, 50, 62, 70});
}

TEST(RefConv, StridedPaddedBorder) {
  // 3x3 ones kernel, pads 1 on a 3x3 of ones: each output counts the real elements its window
  // covers (corners 4, edges 6, center 9); with stride 2 only the four corners remain.
  Node n = MakeNode(Op::Conv, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}},
                    {{"W", T({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}});
  ExpectValues(RunOp(n, {T({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}), {1, 1, 2, 2},
               {4, 4, 4, 4});
  Node s1 = MakeNode(Op::Conv, {{"pads", Ints{1, 1, 1, 1}}},
                     {{"W", T({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}});
  ExpectValues(RunOp(s1, {T({1, 1, 3, 3}, std::vector<float>(9, 1.0f))}), {1, 1, 3, 3},
               {4, 6, 4, 6, 9, 6, 4, 6, 4});
}

TEST(RefConv, Groups) {
  // group 2: output 0 sees input channels 0,1; output 1 sees channels 2,3.
  Node n =
      MakeNode(Op::Conv, {{"group", int64_t{2}}}, {{"W", T({2, 2, 1, 1}, {1, 10, 100, 1000})}});
  ExpectValues(RunOp(n, {T({1, 4, 1, 1}, {1, 2, 3, 4})}), {1, 2, 1, 1}, {21, 4300});
}

TEST(RefConv, DepthwiseMultiplierTwo) {
  // group = C = 2, M = 4: outputs 0,1 read channel 0; outputs 2,3 read channel 1.
  Node n = MakeNode(Op::Conv, {{"group", int64_t{2}}},
                    {{"W", T({4, 1, 1, 1}, {1, 2, 3, 4})}, {"B", T({4}, {0, 0, 0, 100})}});
  ExpectValues(RunOp(n, {T({1, 2, 1, 2}, {1, 2, 3, 4})}), {1, 4, 1, 2},
               {1, 2, 2, 4, 9, 12, 112, 116});
}

TEST(RefConv, BatchOfTwo) {
  Node n = MakeNode(Op::Conv, {}, {{"W", T({2, 1, 1, 1}, {1, -1})}});
  ExpectValues(RunOp(n, {T({2, 1, 1, 1}, {3, 5})}), {2, 2, 1, 1}, {3, -3, 5, -5});
}

TEST(RefConv, MagnitudeByHand) {
  // x = [1, -2, 3], W = [2, 1], B = -1:
  // y0 = -1 + 2*1 + 1*(-2) = -1, m0 = 1 + 2*1 + 1*2 = 5
  // y1 = -1 + 2*(-2) + 1*3 = -2, m1 = 1 + 2*2 + 1*3 = 8
  Node n = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 1, 2}, {2, 1})}, {"B", T({1}, {-1})}});
  RefTensor y = RunOp(n, {T({1, 1, 1, 3}, {1, -2, 3})});
  ExpectValues(y, {1, 1, 1, 2}, {-1, -2});
  ExpectMags(y, {5, 8});
  // A pad contributes nothing to the magnitude: left pad 1 gives y0 = -1 + 1*1, m0 = 1 + 1.
  Node p = MakeNode(Op::Conv, {{"pads", Ints{0, 1, 0, 0}}},
                    {{"W", T({1, 1, 1, 2}, {2, 1})}, {"B", T({1}, {-1})}});
  RefTensor yp = RunOp(p, {T({1, 1, 1, 3}, {1, -2, 3})});
  ExpectValues(yp, {1, 1, 1, 3}, {0, -1, -2});
  ExpectMags(yp, {2, 5, 8});
}

TEST(RefConv, MagnitudeUsesInputMagnitudes) {
  // Sub gives d = [3, 5] - [2, 5] = [1, 0] with m_d = [5, 10] (not |d|); the conv then sums
  // |w| * m_d: y = 2*1 - 1*0 = 2, m = 2*5 + 1*10 = 20.
  Graph g;
  g.inputs = {{"x", {1, 1, 1, 2}}};
  Node sub = MakeNode(Op::Sub, {}, {{"B", T({1, 1, 1, 2}, {2, 5})}});
  sub.inputs = {"x"};
  sub.output = "d";
  Node conv = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 1, 2}, {2, -1})}});
  conv.inputs = {"d"};
  conv.output = "y";
  g.nodes = {sub, conv};
  g.outputs = {"y"};
  RefTensor y = RunReference(g, {{"x", T({1, 1, 1, 2}, {3, 5})}}).at("y");
  ExpectValues(y, {1, 1, 1, 1}, {2});
  ExpectMags(y, {20});
}

TEST(RefConv, NanAndInfPropagate) {
  Node n = MakeNode(Op::Conv, {}, {{"W", T({1, 1, 1, 1}, {2})}});
  const float inf = std::numeric_limits<float>::infinity();
  RefTensor y = RunOp(n, {T({1, 1, 1, 3}, {std::nanf(""), inf, 1})});
  EXPECT_TRUE(std::isnan(y.value[0]));
  EXPECT_TRUE(std::isnan(y.mag[0]));
  EXPECT_EQ(y.value[1], inf);
  EXPECT_EQ(y.mag[1], inf);
  EXPECT_EQ(y.value[2], 2);
}

}  // namespace
}  // namespace fusefuzz::reftest
