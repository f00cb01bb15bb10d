// The reference interpreter: straight loops in double precision, one file per op family, that
// also computes beside every value r its magnitude m (the same computation over absolute values;
// see docs/oracle.md) and its error scale sigma (the expected size of a float32 evaluation's
// accumulated rounding error; docs/oracle.md, "The sigma oracle"). It shares no code with
// kernels/fast.
// Op semantics and the magnitude rule of each op, with the reasoning: docs/reference.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct RefTensor {
  Shape shape;
  std::vector<double> value;
  std::vector<double> mag;    // >= 0, same size as value
  std::vector<double> sigma;  // >= 0, same size as value
  // The length of the float32 sum (conv, Gemm, MatMul) this tensor may still be accumulated in:
  // an optimizer may fold a later constant shift or a residual into that sum's accumulator,
  // so that its partial sums carry the addend (docs/oracle.md, "The sigma oracle"). 0 when no
  // sum can absorb an addend (after an activation, a pool, a norm, ...).
  double open_sum = 0;
};

// How far (in sigmas) a nonlinear op looks around x to see how an input error moves its output
// (kinks, clamps, steep slopes); the sigma oracle's default factor is the same number.
inline constexpr double kSigmaProbe = 8;
using RefTensorMap = std::map<std::string, RefTensor>;

// Runs a verified graph. `inputs` must hold every graph input with its declared shape (throws
// InputError otherwise). Returns the graph outputs, or every value when `all_values`.
RefTensorMap RunReference(const Graph& g, const TensorMap& inputs, bool all_values = false);

// Float32 view of reference values (rounded to nearest), e.g. to write an outputs file.
Tensor ToFloatTensor(const RefTensor& t);

}  // namespace fusefuzz
