// Fast float32 reductions, Softmax, Transpose and unary math ops against the reference, at every
// ISA level.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz::fast_test {
namespace {

Node MathNode(Op op, AttrMap attrs = {}) {
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

TEST(FastMath, ReduceMeanEveryAxisSet) {
  const std::vector<std::vector<int64_t>> axes = {{-1}, {3}, {2, 3}, {1}, {0}, {0, 1, 2, 3}};
  for (const auto& a : axes) {
    for (int64_t keep : {0, 1}) {
      if (keep == 0 && a.size() == 4) continue;  // would leave no dim
      Graph g =
          OneNode(MathNode(Op::ReduceMean, {{"axes", a}, {"keepdims", keep}}), {{2, 3, 4, 5}});
      CheckAgainstReference(g, Inputs(g, 7, -3, 3), "ReduceMean keepdims " + std::to_string(keep));
    }
  }
}

TEST(FastMath, ReduceSumMaxSoftmaxTranspose) {
  for (Op op : {Op::ReduceSum, Op::ReduceMax}) {
    for (const std::vector<int64_t>& a : {std::vector<int64_t>{-1}, {1, 2}, {0}}) {
      Graph g = OneNode(MathNode(op, {{"axes", a}, {"keepdims", int64_t{1}}}), {{2, 3, 4, 5}});
      CheckAgainstReference(g, Inputs(g, 5, -3, 3), std::string(OpName(op)));
    }
  }
  for (int64_t axis : {-1, 1, 0, 2}) {
    Graph g = OneNode(MathNode(Op::Softmax, {{"axis", axis}}), {{2, 3, 4, 5}});
    CheckAgainstReference(g, Inputs(g, 9, -6, 6), "Softmax axis " + std::to_string(axis));
  }
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{0, 1, 3, 2}, {0, 2, 3, 1}, {3, 2, 1, 0}}) {
    Graph g = OneNode(MathNode(Op::Transpose, {{"perm", perm}}), {{2, 3, 4, 5}});
    CheckAgainstReference(g, Inputs(g, 3, -2, 2), "Transpose");
  }
}

TEST(FastMath, UnaryOps) {
  for (Op op : {Op::Sqrt, Op::Reciprocal, Op::Exp, Op::Log, Op::Erf}) {
    Graph g = OneNode(MathNode(op), {{1, 3, 4, 5}});
    // Positive inputs for sqrt, log and 1/x; any sign for exp and erf.
    const bool positive = op == Op::Sqrt || op == Op::Log || op == Op::Reciprocal;
    CheckAgainstReference(g, Inputs(g, 11, positive ? 0.01f : -4, 4), std::string(OpName(op)));
  }
  for (double e : {0.5, 1.0, 2.0, 3.0}) {
    Graph g = OneNode(MathNode(Op::Pow, {{"exponent", e}}), {{1, 3, 4, 5}});
    CheckAgainstReference(g, Inputs(g, 13, e == 0.5 ? 0.0f : -3, 3), "Pow " + std::to_string(e));
  }
}

}  // namespace
}  // namespace fusefuzz::fast_test
