// Binary ops: constants on either side, numpy broadcasting in every direction, hand values for
// the non-commutative ops, and the reference.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

Node BinNode(Op op, ParamMap params = {}) {
  Node n;
  n.name = "bin";
  n.op = op;
  n.params = std::move(params);
  return n;
}

TEST(FastBinary, ConstantOnEitherSide) {
  const Tensor x = Values({1, 2, 1, 2}, {1, 2, 3, 4});
  auto run = [&](const Node& n) {
    return RunFast(OneNode(n, {x.shape}), {{"x", x}}).at("out").data;
  };
  // A = [C] constant on the left: c - x with c broadcast per ... trailing dim (numpy rules).
  EXPECT_EQ(run(BinNode(Op::Sub, {{"A", Values({1}, {10})}})), (std::vector<float>{9, 8, 7, 6}));
  EXPECT_EQ(run(BinNode(Op::Sub, {{"B", Values({1}, {10})}})),
            (std::vector<float>{-9, -8, -7, -6}));
  EXPECT_EQ(run(BinNode(Op::Div, {{"A", Values({1, 2, 1, 1}, {12, 24})}})),
            (std::vector<float>{12, 6, 8, 6}));
  EXPECT_EQ(run(BinNode(Op::Div, {{"B", Values({2}, {2, 4})}})),
            (std::vector<float>{0.5, 0.5, 1.5, 1}));
  EXPECT_EQ(run(BinNode(Op::Mul, {{"B", Values({1, 2, 1, 2}, {1, 0, -1, 2})}})),
            (std::vector<float>{1, 0, -3, 8}));
}

TEST(FastBinary, TwoInputsBroadcastBothWays) {
  // [2,1] op [1,3] -> [2,3]
  Node n = BinNode(Op::Sub);
  Graph g = OneNode(n, {{2, 1}, {1, 3}});
  Tensor out =
      RunFast(g, {{"x", Values({2, 1}, {10, 20})}, {"y", Values({1, 3}, {1, 2, 3})}}).at("out");
  EXPECT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.data, (std::vector<float>{9, 8, 7, 19, 18, 17}));
}

TEST(FastBinary, MatchesReference) {
  const Shape full = {2, 3, 4, 5};
  const std::vector<Shape> others = {full, {2, 3, 1, 1}, {1, 3, 1, 1}, {3, 1, 1},   {5},
                                     {1},  {4, 1},       {2, 1, 4, 5}, {1, 1, 1, 5}};
  uint64_t seed = 90;
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    for (const Shape& s : others) {
      const std::string what = std::string(OpName(op)) + " " + ShapeToString(s);
      Graph two = OneNode(BinNode(op), {full, s});
      TensorMap in = {{"x", Random(full, seed)}, {"y", Random(s, seed + 1, 0.5f, 2.0f)}};
      CheckAgainstReference(two, in, what + " inputs");
      Graph swapped = OneNode(BinNode(op), {s, full});
      CheckAgainstReference(swapped, {{"x", in["y"]}, {"y", in["x"]}}, what + " swapped");
      Graph ca = OneNode(BinNode(op, {{"A", in["y"]}}), {full});
      CheckAgainstReference(ca, {{"x", in["x"]}}, what + " const A", 2);
      Graph cb = OneNode(BinNode(op, {{"B", in["y"]}}), {full});
      CheckAgainstReference(cb, {{"x", in["x"]}}, what + " const B");
      seed += 2;
    }
  }
}

}  // namespace
}  // namespace fusefuzz
