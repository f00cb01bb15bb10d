// Reference Pad (constant with value, reflect), Concat on channels, Identity.
#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

TEST(RefPad, ConstantWithValue) {
  // pads top=1, right=2 with -9; the fill's magnitude is |value|.
  Node n = MakeNode(Op::Pad, {{"pads", Ints{1, 0, 0, 2}}, {"value", -9.0}});
  RefTensor y = RunOp(n, {T({1, 1, 2, 3}, {1, -2, 3, 4, 5, 6})});
  ExpectValues(y, {1, 1, 3, 5}, {-9, -9, -9, -9, -9, 1, -2, 3, -9, -9, 4, 5, 6, -9, -9});
  ExpectMags(y, {9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9});
  // Default mode constant, default value 0.
  Node z = MakeNode(Op::Pad, {{"pads", Ints{0, 1, 0, 0}}});
  ExpectValues(RunOp(z, {T({1, 1, 1, 2}, {7, 8})}), {1, 1, 1, 3}, {0, 7, 8});
}

TEST(RefPad, ReflectExcludesTheEdge) {
  // x[h][w] = 3h + w + 1 on 3x3; pads top 1, left 2, bottom 1, right 1. Rows read 1,0,1,2,1;
  // columns read 2,1,0,1,2,1.
  Node n = MakeNode(Op::Pad, {{"pads", Ints{1, 2, 1, 1}}, {"mode", std::string("reflect")}});
  std::vector<float> x;
  for (int i = 1; i <= 9; ++i) x.push_back(static_cast<float>(i));
  RefTensor y = RunOp(n, {T({1, 1, 3, 3}, x)});
  ExpectValues(y, {1, 1, 5, 6}, {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4,
                                 5, 6, 5, 9, 8, 7, 8, 9, 8, 6, 5, 4, 5, 6, 5});
  EXPECT_EQ(y.mag, y.value);  // all positive inputs: copies of |x|
}

TEST(RefConcat, ChannelsInterleavePerBatch) {
  RefTensor y =
      RunOp(MakeNode(Op::Concat), {T({2, 1, 1, 1}, {1, 2}), T({2, 2, 1, 1}, {3, 4, 5, -6})});
  ExpectValues(y, {2, 3, 1, 1}, {1, 3, 4, 2, 5, -6});
  ExpectMags(y, {1, 3, 4, 2, 5, 6});
  // Three inputs, rank 2.
  ExpectValues(RunOp(MakeNode(Op::Concat), {T({1, 1}, {1}), T({1, 2}, {2, 3}), T({1, 1}, {4})}),
               {1, 4}, {1, 2, 3, 4});
}

TEST(RefIdentity, Copies) {
  RefTensor y = RunOp(MakeNode(Op::Identity), {T({3}, {-1, 0, 2})});
  ExpectValues(y, {3}, {-1, 0, 2});
  ExpectMags(y, {1, 0, 2});
}

}  // namespace
}  // namespace fusefuzz::reftest
