// The per-op fact columns of ir/ops.def (monotone, rounding) against the reference semantics,
// on a grid of inputs: a column that claims too much (a non-monotone activation marked monotone,
// which would let pool-activation-reorder change results) or too little fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

// x = -8 .. 8 in steps of 1/64 (exact in float32).
std::vector<float> Grid() {
  std::vector<float> x;
  for (int i = -512; i <= 512; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  return x;
}

// The activation on the grid through the reference kernel; `alpha`/`slope` set the attribute or
// param that the monotone column's condition is about (ignored by ops without one).
std::vector<double> Eval(Op op, double alpha_or_slope, std::string gelu_form = "none") {
  AttrMap attrs;
  ParamMap params;
  switch (MonotonicityOf(op)) {
    case Monotonicity::kIfAlphaNonNegative:
      attrs["alpha"] = alpha_or_slope;
      break;
    case Monotonicity::kIfSlopesNonNegative:
      params["slope"] = T({1}, {static_cast<float>(alpha_or_slope)});
      break;
    case Monotonicity::kAlways:
    case Monotonicity::kNever:
    case Monotonicity::kNotActivation:
      break;
  }
  if (op == Op::Clip) attrs = {{"min", -1.5}, {"max", 2.0}};
  if (op == Op::Gelu) attrs["approximate"] = gelu_form;
  const std::vector<float> x = Grid();
  const int64_t n = static_cast<int64_t>(x.size());
  return RunOp(MakeNode(op, attrs, params), {T({1, 1, 1, n}, x)}).value;
}

// The largest drop y[i] - y[i+1] over the grid (<= 0: non-decreasing).
double LargestDrop(const std::vector<double>& y) {
  double drop = -INFINITY;
  for (size_t i = 0; i + 1 < y.size(); ++i) drop = std::max(drop, y[i] - y[i + 1]);
  return drop;
}

// Grid points where the third finite difference is not zero: a piecewise polynomial of degree
// <= 2 (a few roundings: RoundingClass::kPiecewiseLinear) has them only next to its kinks.
int CurvedPoints(const std::vector<double>& y) {
  int count = 0;
  for (size_t i = 0; i + 3 < y.size(); ++i) {
    const double d3 = y[i + 3] - 3 * y[i + 2] + 3 * y[i + 1] - y[i];
    if (std::abs(d3) > 1e-12) ++count;
  }
  return count;
}

// Rounding in the double reference may wiggle a monotone function by an ulp; a real decrease of
// a non-monotone one is far larger (at least ~1e-4 per step on this grid).
constexpr double kUlpSlack = 1e-12;

TEST(OpFacts, OnlyActivationsHaveActivationFacts) {
  for (Op op : AllOps()) {
    SCOPED_TRACE(std::string(OpName(op)));
    EXPECT_EQ(IsActivation(op), MonotonicityOf(op) != Monotonicity::kNotActivation);
    EXPECT_EQ(IsActivation(op), RoundingClassOf(op) != RoundingClass::kNotActivation);
  }
}

TEST(OpFacts, MonotoneColumnAgreesWithTheReference) {
  for (Op op : AllOps()) {
    SCOPED_TRACE(std::string(OpName(op)));
    switch (MonotonicityOf(op)) {
      case Monotonicity::kNotActivation:
        break;
      case Monotonicity::kAlways:
        EXPECT_LE(LargestDrop(Eval(op, 0)), kUlpSlack);
        break;
      case Monotonicity::kIfAlphaNonNegative:
      case Monotonicity::kIfSlopesNonNegative:
        // Monotone for every non-negative value, and a negative one breaks it (else the
        // condition is stricter than needed and the rule misses rewrites).
        for (double a : {0.0, 0.01, 0.3, 1.0, 2.5}) {
          EXPECT_LE(LargestDrop(Eval(op, a)), kUlpSlack);
        }
        EXPECT_GT(LargestDrop(Eval(op, -0.5)), 1e-4);
        break;
      case Monotonicity::kNever:
        EXPECT_GT(LargestDrop(Eval(op, 0)), 1e-4);
        if (op == Op::Gelu) {
          EXPECT_GT(LargestDrop(Eval(op, 0, "tanh")), 1e-4);
        }
        break;
    }
  }
}

TEST(OpFacts, RoundingColumnAgreesWithTheReference) {
  const int points = static_cast<int>(Grid().size()) - 3;
  for (Op op : AllOps()) {
    SCOPED_TRACE(std::string(OpName(op)));
    switch (RoundingClassOf(op)) {
      case RoundingClass::kNotActivation:
        break;
      case RoundingClass::kPiecewiseLinear:
        // At most 3 grid points next to each of a few kinks.
        EXPECT_LE(CurvedPoints(Eval(op, 0.25)), 12);
        break;
      case RoundingClass::kTranscendental:
        EXPECT_GT(CurvedPoints(Eval(op, 0.25)), points / 4);
        break;
    }
  }
}

}  // namespace
}  // namespace fusefuzz::reftest
