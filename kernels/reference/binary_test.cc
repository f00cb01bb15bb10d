// Reference Add/Sub/Mul/Div: broadcasting shapes, constants on either side, magnitudes.
#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

const Tensor kX = T({1, 2, 1, 2}, {1, 2, 3, 4});

TEST(RefBinary, ChannelConstantBroadcasts) {
  Node n = MakeNode(Op::Add, {}, {{"B", T({1, 2, 1, 1}, {10, 20})}});
  ExpectValues(RunOp(n, {kX}), {1, 2, 1, 2}, {11, 12, 23, 24});
}

TEST(RefBinary, ScalarConstant) {
  Node n = MakeNode(Op::Mul, {}, {{"B", T({1}, {2})}});
  ExpectValues(RunOp(n, {kX}), {1, 2, 1, 2}, {2, 4, 6, 8});
}

TEST(RefBinary, VectorAlignsWithLastDim) {
  // numpy: a [3] operand lines up with W (the last dim), not with C.
  Node n = MakeNode(Op::Add, {}, {{"B", T({3}, {10, 20, 30})}});
  ExpectValues(RunOp(n, {T({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}), {1, 1, 2, 3},
               {11, 22, 33, 14, 25, 36});
}

TEST(RefBinary, FullShapeConstantAndTwoInputs) {
  Node c = MakeNode(Op::Sub, {}, {{"B", T({1, 2, 1, 2}, {4, 3, 2, 1})}});
  ExpectValues(RunOp(c, {kX}), {1, 2, 1, 2}, {-3, -1, 1, 3});
  Node two = MakeNode(Op::Div);
  ExpectValues(RunOp(two, {kX, T({1, 2, 1, 2}, {2, 4, 8, 16})}), {1, 2, 1, 2},
               {0.5, 0.5, 0.375, 0.25});
}

TEST(RefBinary, ResidualBroadcastBetweenInputs) {
  // [1,2,2,2] + [1,2,1,1] and the operands swapped: same result, broadcast on either side.
  const Tensor big = T({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor small = T({1, 2, 1, 1}, {100, 200});
  const std::vector<double> want = {101, 102, 103, 104, 205, 206, 207, 208};
  ExpectValues(RunOp(MakeNode(Op::Add), {big, small}), {1, 2, 2, 2}, want);
  ExpectValues(RunOp(MakeNode(Op::Add), {small, big}), {1, 2, 2, 2}, want);
  // Both operands broadcast: [1,2,1,1] - [1,1,1,3] -> [1,2,1,3].
  ExpectValues(RunOp(MakeNode(Op::Sub), {small, T({1, 1, 1, 3}, {1, 2, 3})}), {1, 2, 1, 3},
               {99, 98, 97, 199, 198, 197});
}

TEST(RefBinary, ConstantOnTheLeftOfSubAndDiv) {
  Node sub = MakeNode(Op::Sub, {}, {{"A", T({1}, {10})}});
  ExpectValues(RunOp(sub, {kX}), {1, 2, 1, 2}, {9, 8, 7, 6});
  Node div = MakeNode(Op::Div, {}, {{"A", T({1, 2, 1, 1}, {1, 12})}});
  ExpectValues(RunOp(div, {kX}), {1, 2, 1, 2}, {1, 0.5, 4, 3});
  // A [2] constant on the left lines up with W.
  Node mul = MakeNode(Op::Mul, {}, {{"A", T({2}, {-1, 2})}});
  ExpectValues(RunOp(mul, {kX}), {1, 2, 1, 2}, {-1, 4, -3, 8});
}

TEST(RefBinary, Magnitudes) {
  const Tensor a = T({1, 1, 1, 1}, {3});
  const Tensor b = T({1, 1, 1, 1}, {-2});
  RefTensor add = RunOp(MakeNode(Op::Add), {a, b});
  ExpectValues(add, {1, 1, 1, 1}, {1});
  ExpectMags(add, {5});  // m_a + m_b
  RefTensor sub = RunOp(MakeNode(Op::Sub), {a, b});
  ExpectValues(sub, {1, 1, 1, 1}, {5});
  ExpectMags(sub, {5});
  RefTensor mul = RunOp(MakeNode(Op::Mul), {a, b});
  ExpectValues(mul, {1, 1, 1, 1}, {-6});
  ExpectMags(mul, {12});  // m_a*|b| + |a|*m_b = 3*2 + 3*2
  RefTensor div = RunOp(MakeNode(Op::Div), {a, b});
  ExpectValues(div, {1, 1, 1, 1}, {-1.5});
  ExpectMags(div, {3});  // (m_a + |a/b|*m_b)/|b| = (3 + 1.5*2)/2
}

TEST(RefBinary, DivisionByZero) {
  RefTensor y = RunOp(MakeNode(Op::Div), {T({1, 3}, {1, -1, 0}), T({1, 3}, {0, 0, 0})});
  EXPECT_EQ(y.value[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(y.value[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(y.value[2]));
  EXPECT_FALSE(std::isfinite(y.mag[0]));
  EXPECT_FALSE(std::isfinite(y.mag[2]));
}

}  // namespace
}  // namespace fusefuzz::reftest
