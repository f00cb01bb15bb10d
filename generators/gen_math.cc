// The building-block ops (the reductions, Softmax, Transpose and the unary math ops) as single ops
// of the `single` pattern, when a config gives them a weight (their default weight is 0: the
// decomposed patterns of gen_decomposed.cc build them).
#include <variant>

#include "generators/gen_builder.h"

namespace fusefuzz::gen {

std::string Builder::EmitMath(Op op, const std::string& x, int64_t budget) {
  if (op == Op::Softmax) {
    const int64_t kAxis[] = {-1, 1, 3, 2};
    const double w[] = {4, 1, 1, 0.5};
    return AddNode(op, {x}, {{"axis", kAxis[src_.Pick(w)]}});
  }
  if (op == Op::Transpose) {
    // Swaps of the two last dims (attention's K^T), NCHW <-> NHWC, and a full reversal.
    const std::vector<int64_t> kPerm[] = {{0, 1, 3, 2}, {0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}};
    const double w[] = {3, 1, 1, 0.5};
    return AddNode(op, {x}, {{"perm", kPerm[src_.Pick(w)]}});
  }
  if (op == Op::ReduceMean || op == Op::ReduceSum || op == Op::ReduceMax) {
    const std::vector<int64_t> kAxes[] = {{-1}, {2, 3}, {1}, {1, 2, 3}, {0}};
    const double w[] = {3, 2, 1, 1, 0.5};
    return AddNode(op, {x}, {{"axes", kAxes[src_.Pick(w)]}, {"keepdims", int64_t{1}}});
  }
  AttrMap attrs;
  if (op == Op::Pow) {
    const double kExp[] = {2, 3, 0.5, 1};
    const double w[] = {3, 1, 1, 0.3};
    attrs["exponent"] = kExp[src_.Pick(w)];
  }
  // A positive domain for sqrt, log and 1/x (and x^0.5): their input goes through Exp first;
  // with a budget of one node, Exp or Erf alone.
  const bool positive_only = op == Op::Sqrt || op == Op::Log || op == Op::Reciprocal ||
                             (op == Op::Pow && std::get<double>(attrs["exponent"]) == 0.5);
  if (!positive_only) return AddNode(op, {x}, std::move(attrs));
  if (budget < 2) return AddNode(src_.Bool(0.5) ? Op::Exp : Op::Erf, {x});
  return AddNode(op, {AddNode(Op::Exp, {x})}, std::move(attrs));
}

}  // namespace fusefuzz::gen
