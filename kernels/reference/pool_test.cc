// Reference pools against hand-computed values: pads, ceil_mode (incl. the dropped last window),
// count_include_pad 0/1, MaxPool pads as -inf, GlobalAvgPool, and pool magnitudes.
#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

AttrMap PoolAttrs(Ints kernel, Ints strides, Ints pads, int64_t ceil, int64_t include_pad = -1) {
  AttrMap a = {{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", ceil}};
  if (include_pad >= 0) a["count_include_pad"] = include_pad;
  return a;
}

std::vector<float> Seq(int count, float start, float step) {
  std::vector<float> v;
  for (int i = 0; i < count; ++i) v.push_back(start + step * static_cast<float>(i));
  return v;
}

TEST(RefPool, MaxPoolBasic) {
  Node n = MakeNode(Op::MaxPool, PoolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}, 0));
  ExpectValues(RunOp(n, {T({1, 1, 4, 4}, Seq(16, 1, 1))}), {1, 1, 2, 2}, {6, 8, 14, 16});
}

TEST(RefPool, MaxPoolPadsAreMinusInfinity) {
  // All-negative input: a zero pad would win every border window; -inf pads never do.
  Node n = MakeNode(Op::MaxPool, PoolAttrs({2, 2}, {2, 2}, {1, 1, 1, 1}, 0));
  ExpectValues(RunOp(n, {T({1, 1, 4, 4}, Seq(16, -1, -1))}), {1, 1, 3, 3},
               {-1, -2, -4, -5, -6, -8, -13, -14, -16});
}

TEST(RefPool, AvgPoolPadsCountIncludePad) {
  const std::vector<float> x = {1, 2, 3, 4};
  Node incl = MakeNode(Op::AvgPool, PoolAttrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 1));
  ExpectValues(RunOp(incl, {T({1, 1, 2, 2}, x)}), {1, 1, 3, 3},
               {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
  Node excl = MakeNode(Op::AvgPool, PoolAttrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0));
  ExpectValues(RunOp(excl, {T({1, 1, 2, 2}, x)}), {1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  // count_include_pad defaults to 0.
  Node dflt = MakeNode(Op::AvgPool, PoolAttrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 0));
  ExpectValues(RunOp(dflt, {T({1, 1, 2, 2}, x)}), {1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
}

TEST(RefPool, CeilModeWindowOverhangingThePaddedBorder) {
  // W = 6, k = 3, s = 2, pads 1/1: floor gives 3 windows, ceil 4. Window 3 covers [5, 8): input
  // column 5, pad column 6, and column 7 beyond the padded border.
  const Tensor x = T({1, 1, 1, 6}, {1, 2, 3, 4, 5, 6});
  Node floor_avg = MakeNode(Op::AvgPool, PoolAttrs({1, 3}, {1, 2}, {0, 1, 0, 1}, 0, 1));
  ExpectValues(RunOp(floor_avg, {x}), {1, 1, 1, 3}, {1, 3, 5});
  // Include-pad divisor counts up to the padded border only: 6 / 2.
  Node incl = MakeNode(Op::AvgPool, PoolAttrs({1, 3}, {1, 2}, {0, 1, 0, 1}, 1, 1));
  ExpectValues(RunOp(incl, {x}), {1, 1, 1, 4}, {1, 3, 5, 3});
  Node excl = MakeNode(Op::AvgPool, PoolAttrs({1, 3}, {1, 2}, {0, 1, 0, 1}, 1, 0));
  ExpectValues(RunOp(excl, {x}), {1, 1, 1, 4}, {1.5, 3, 5, 6});
  Node max = MakeNode(Op::MaxPool, PoolAttrs({1, 3}, {1, 2}, {0, 1, 0, 1}, 1));
  ExpectValues(RunOp(max, {x}), {1, 1, 1, 4}, {2, 4, 6, 6});
}

TEST(RefPool, CeilModeWithoutPads) {
  const Tensor x = T({1, 1, 1, 5}, {1, 2, 3, 4, 5});
  Node floor_max = MakeNode(Op::MaxPool, PoolAttrs({1, 2}, {1, 2}, {0, 0, 0, 0}, 0));
  ExpectValues(RunOp(floor_max, {x}), {1, 1, 1, 2}, {2, 4});
  Node ceil_max = MakeNode(Op::MaxPool, PoolAttrs({1, 2}, {1, 2}, {0, 0, 0, 0}, 1));
  ExpectValues(RunOp(ceil_max, {x}), {1, 1, 1, 3}, {2, 4, 5});
  Node ceil_avg = MakeNode(Op::AvgPool, PoolAttrs({1, 2}, {1, 2}, {0, 0, 0, 0}, 1, 1));
  ExpectValues(RunOp(ceil_avg, {x}), {1, 1, 1, 3}, {1.5, 3.5, 5});
}

TEST(RefPool, CeilModeDropsWindowStartingInEndPad) {
  // W = 4, k = 2, s = 2, right pad 1: ceil((4+1-2)/2)+1 = 3 windows, but the third would start
  // at column 4, inside the end padding, so ONNX/PyTorch drop it.
  Node n = MakeNode(Op::MaxPool, PoolAttrs({1, 2}, {1, 2}, {0, 0, 0, 1}, 1));
  ExpectValues(RunOp(n, {T({1, 1, 1, 4}, {1, 2, 3, 4})}), {1, 1, 1, 2}, {2, 4});
  Node avg = MakeNode(Op::AvgPool, PoolAttrs({1, 2}, {1, 2}, {0, 0, 0, 1}, 1, 1));
  ExpectValues(RunOp(avg, {T({1, 1, 1, 4}, {1, 2, 3, 4})}), {1, 1, 1, 2}, {1.5, 3.5});
}

TEST(RefPool, GlobalAvgPoolAndMagnitudes) {
  RefTensor y = RunOp(MakeNode(Op::GlobalAvgPool), {T({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, -8})});
  ExpectValues(y, {1, 2, 1, 1}, {2.5, 2.5});
  ExpectMags(y, {2.5, 6.5});  // mean of |x|
  Node avg = MakeNode(Op::AvgPool, PoolAttrs({1, 2}, {1, 1}, {0, 1, 0, 0}, 0, 1));
  RefTensor a = RunOp(avg, {T({1, 1, 1, 2}, {-2, 4})});
  ExpectValues(a, {1, 1, 1, 2}, {-1, 1});
  ExpectMags(a, {1, 3});  // same divisor over magnitudes
  Node max = MakeNode(Op::MaxPool, PoolAttrs({1, 2}, {1, 1}, {0, 0, 0, 0}, 0));
  RefTensor m = RunOp(max, {T({1, 1, 1, 3}, {-5, 2, 1})});
  ExpectValues(m, {1, 1, 1, 2}, {2, 2});
  ExpectMags(m, {4, 4});  // m of the selected element + |r|
}

TEST(RefPool, MaxPoolNearTieTakesTheLargerMagnitude) {
  // Sub makes [1, 1e6+1] - [0, 1e6+1/16] = [1, 0.9375] with magnitudes [1, 2e6+1.0625]. The
  // first element is the max, but the second is within its own error scale of it, so a float32
  // evaluation may pick it: the magnitude is the larger one.
  Graph g;
  g.inputs = {{"x", {1, 1, 1, 2}}};
  Node sub = MakeNode(Op::Sub, {}, {{"B", T({1, 1, 1, 2}, {0, 1e6f + 0.0625f})}});
  sub.inputs = {"x"};
  sub.output = "d";
  Node max = MakeNode(Op::MaxPool, PoolAttrs({1, 2}, {1, 1}, {0, 0, 0, 0}, 0));
  max.inputs = {"d"};
  max.output = "y";
  g.nodes = {sub, max};
  g.outputs = {"y"};
  RefTensor y = RunReference(g, {{"x", T({1, 1, 1, 2}, {1, 1e6f + 1})}}).at("y");
  ExpectValues(y, {1, 1, 1, 1}, {1});
  ExpectMags(y, {2e6 + 1.0625 + 1});
}

TEST(RefPool, MaxPoolPropagatesNan) {
  Node n = MakeNode(Op::MaxPool, PoolAttrs({1, 3}, {1, 1}, {0, 0, 0, 0}, 0));
  RefTensor y = RunOp(n, {T({1, 1, 1, 3}, {1, std::nanf(""), 3})});
  EXPECT_TRUE(std::isnan(y.value[0]));
}

}  // namespace
}  // namespace fusefuzz::reftest
