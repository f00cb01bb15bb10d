// Reference reductions, Softmax, Transpose, Min/Max and unary math ops against hand-computed values
// and magnitudes (docs/reference.md; the magnitudes' derivations: docs/oracle.md, "Building-block
// ops").
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

TEST(RefMath, ReduceMeanKeepdimsAndAxes) {
  const Tensor x = T({1, 2, 1, 3}, {1, -2, 4, 3, 0, -6});
  RefTensor last =
      RunOp(MakeNode(Op::ReduceMean, {{"axes", Ints{-1}}, {"keepdims", int64_t{1}}}), {x});
  ExpectValues(last, {1, 2, 1, 1}, {1, -1});
  ExpectMags(last, {7.0 / 3, 3});  // mean of |x|
  RefTensor chan =
      RunOp(MakeNode(Op::ReduceMean, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}), {x});
  ExpectValues(chan, {1, 1, 3}, {2, -1, -1});
  ExpectMags(chan, {2, 1, 5});
}

TEST(RefMath, ReduceSumAndMax) {
  const Tensor x = T({1, 2, 1, 3}, {1, -2, 4, 3, 0, -6});
  RefTensor sum =
      RunOp(MakeNode(Op::ReduceSum, {{"axes", Ints{-1}}, {"keepdims", int64_t{1}}}), {x});
  ExpectValues(sum, {1, 2, 1, 1}, {3, -3});
  ExpectMags(sum, {7, 9});  // sum of |x|
  RefTensor max =
      RunOp(MakeNode(Op::ReduceMax, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}), {x});
  ExpectValues(max, {1, 1, 3}, {3, 0, 4});
  ExpectMags(max, {3, 2, 6});  // the largest magnitude of the reduced elements
}

TEST(RefMath, SoftmaxValuesAndMagnitudes) {
  const Tensor x = T({1, 1, 1, 3}, {0, 1, 2});
  RefTensor y = RunOp(MakeNode(Op::Softmax, {{"axis", int64_t{-1}}}), {x});
  const double s = 1 + std::exp(1.0) + std::exp(2.0);
  const std::vector<double> r = {1 / s, std::exp(1.0) / s, std::exp(2.0) / s};
  ExpectValues(y, {1, 1, 1, 3}, r, 1e-15);
  // y_i (4 max_j m_j + 1 + |x_i - max|), max_j m_j = 2 (docs/oracle.md, "Softmax").
  ExpectMags(y, {r[0] * (8 + 1 + 2), r[1] * (8 + 1 + 1), r[2] * (8 + 1)}, 1e-15);
  // Along axis 1 of a [1, 2, 1, 1]: each column normalized on its own.
  RefTensor c = RunOp(MakeNode(Op::Softmax, {{"axis", int64_t{1}}}), {T({1, 2, 1, 1}, {3, 3})});
  ExpectValues(c, {1, 2, 1, 1}, {0.5, 0.5});
}

TEST(RefMath, TransposeMovesValuesAndMagnitudes) {
  const Tensor x = T({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  RefTensor y = RunOp(MakeNode(Op::Transpose, {{"perm", Ints{0, 1, 3, 2}}}), {x});
  ExpectValues(y, {1, 1, 3, 2}, {1, 4, 2, 5, 3, 6});
  ExpectMags(y, {1, 4, 2, 5, 3, 6});
  RefTensor r = RunOp(MakeNode(Op::Transpose, {{"perm", Ints{3, 2, 1, 0}}}), {x});
  ExpectValues(r, {3, 2, 1, 1}, {1, 4, 2, 5, 3, 6});
}

TEST(RefMath, MinMaxSelectWithTheLargerMagnitude) {
  const Tensor x = T({1, 1, 1, 3}, {-2, 0.5f, 3});
  ParamMap p;
  p["B"] = T({1}, {1});
  RefTensor mn = RunOp(MakeNode(Op::Min, {}, p), {x});
  ExpectValues(mn, {1, 1, 1, 3}, {-2, 0.5, 1});
  ExpectMags(mn, {2, 1, 3});  // max(m_a, m_b)
  RefTensor mx = RunOp(MakeNode(Op::Max, {}, p), {x});
  ExpectValues(mx, {1, 1, 1, 3}, {1, 1, 3});
}

TEST(RefMath, PowKeepsABoundAtACancelledZero) {
  // x = 0 exactly with magnitude 0: exact. A graph input's magnitude is |x|, so build the
  // cancelled zero as x - x: value 0, magnitude 2|x|; its square keeps 2^-10 (2|x|)^2.
  Graph g;
  g.inputs = {{"x", {1, 1, 1, 1}}};
  Node sub = MakeNode(Op::Sub);
  sub.inputs = {"x", "x"};
  sub.output = "d";
  Node pow = MakeNode(Op::Pow, {{"exponent", 2.0}});
  pow.name = "p";
  pow.inputs = {"d"};
  pow.output = "y";
  g.nodes = {sub, pow};
  g.outputs = {"y"};
  RefTensor y = RunReference(g, {{"x", T({1, 1, 1, 1}, {3})}}).at("y");
  ExpectValues(y, {1, 1, 1, 1}, {0});
  ExpectMags(y, {std::ldexp(36.0, -10)});
}

TEST(RefMath, UnaryValuesAndMagnitudes) {
  const Tensor x = T({1, 1, 1, 2}, {4, 0.25f});
  RefTensor s = RunOp(MakeNode(Op::Sqrt), {x});
  ExpectValues(s, {1, 1, 1, 2}, {2, 0.5});
  ExpectMags(s, {4.0 / 2 + 2, 0.25 / 0.5 + 0.5});  // m/sqrt(x) + |r|
  RefTensor r = RunOp(MakeNode(Op::Reciprocal), {x});
  ExpectValues(r, {1, 1, 1, 2}, {0.25, 4});
  ExpectMags(r, {2 * 4.0 / 16 + 0.25, 2 * 0.25 / 0.0625 + 4});
  RefTensor l = RunOp(MakeNode(Op::Log), {x});
  ExpectValues(l, {1, 1, 1, 2}, {std::log(4.0), std::log(0.25)}, 1e-15);
  ExpectMags(l, {2 + std::log(4.0), 2 + std::log(4.0)}, 1e-15);
  RefTensor c = RunOp(MakeNode(Op::Pow, {{"exponent", 3.0}}), {x});
  ExpectValues(c, {1, 1, 1, 2}, {64, 0.015625});
  // An exact zero stays exact under Sqrt; Exp of a finite x stops at 2^256.
  ExpectMags(RunOp(MakeNode(Op::Sqrt), {T({1}, {0})}), {0});
  ExpectValues(RunOp(MakeNode(Op::Exp), {T({1}, {1000})}), {1}, {std::ldexp(1.0, 256)});
}

}  // namespace
}  // namespace fusefuzz::reftest
