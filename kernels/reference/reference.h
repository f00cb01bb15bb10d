// The reference interpreter: straight loops in double precision, one file per op family, that
// also computes beside every value r its magnitude m (the same computation over absolute values;
// see docs/oracle.md) and its error scale sigma (the expected size of a float32 evaluation's
// accumulated rounding error; docs/oracle.md, "The sigma oracle"). It shares no code with
// kernels/fast.
// Op semantics and the magnitude rule of each op, with the reasoning: docs/reference.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/quantize_rounding.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct RefTensor {
  Shape shape;
  std::vector<double> value;
  std::vector<double> mag;    // >= 0, same size as value
  std::vector<double> sigma;  // >= 0, same size as value
  // >= 0, same size as value: the largest absolute value any stage of this element's exact
  // computation holds, over its whole dependency cone: every leaf it reads (graph inputs,
  // constants: all weights of its output channel), every earlier value, every intermediate of an
  // op's formula (a divisor's reciprocal, x - mean), and every reduction's partial sums
  // (bounded by the sum of |terms|, before a division). Values, not magnitudes: m is an error
  // yardstick that outgrows the values of a deep graph by orders of magnitude.
  // A format whose largest finite number is below it may overflow inside the computation while
  // the result fits (docs/oracle.md, "Reduced-precision targets": range inside the graph).
  std::vector<double> peak = {};
  // The length of the float32 sum (conv, Gemm, MatMul) this tensor may still be accumulated in:
  // an optimizer may fold a later constant shift or a residual into that sum's accumulator,
  // so that its partial sums carry the addend (docs/oracle.md, "The sigma oracle"). 0 when no
  // sum can absorb an addend (after an activation, a pool, a norm, ...).
  double open_sum = 0;
  // Integer-valued tensors (the outputs of QuantizeLinear, QLinearConv and QLinearAdd, and
  // Identity/Reshape/Flatten/Concat of them; docs/quantization.md): `value` is the integer the
  // ONNX rounding gives, and per element grid_t is the unrounded grid position t = v / s + z
  // (fp64, from the fp64 value v before the rounding) and grid_e the admitted extra half-width
  // E >= 0 in steps: a correct engine's integer c satisfies |c - t| <= 0.5 + E, within
  // [grid_qmin, grid_qmax] (AdmittedRange). Empty for float tensors. `mag` and `sigma` of such a
  // tensor carry the admitted spread (in steps) for the float ops that consume it.
  std::vector<double> grid_t = {};
  std::vector<double> grid_e = {};
  // The same half-width under the sigma machinery (docs/oracle.md, "Carried spread in
  // quadrature"): the spread of earlier quantized tensors added in quadrature, as the sigma
  // oracle adds carried errors, instead of through the L1 norm of the weights; <= grid_e. The
  // grid oracle judges with it under --oracle sigma, with grid_e otherwise. Same size as grid_e.
  std::vector<double> grid_es = {};
  // A DequantizeLinear's output: the part of `sigma` that is the carried integer spread
  // (D_s * |s| / 8, whole steps), which a Conv reading it adds linearly to its own rounding and,
  // between taps of one value, linearly to each other (docs/oracle.md, "Carried spread in
  // quadrature"). Empty elsewhere.
  std::vector<double> spread = {};
  // Per element of `spread`: which taps' flips go together (SpreadKey).
  std::vector<double> spread_key = {};
  int64_t grid_qmin = 0, grid_qmax = 0;
  // An exact float32 tie (E = 0, t on a half-integer) may be rounded to either neighbour by a
  // correct engine: the target declared half-away rounding (QuantizeRounding::kHalfAway), so the
  // other neighbour is carried forward as a spread (IntegerSpread). False for ONNX's rule, which
  // defines the tie's integer.
  bool grid_ties_either = false;
  // A per-tensor DequantizeLinear's output lies on s * (q - z): its s (else 0). A Conv with a
  // weight grid fed by it admits its bias' rounding to the int32 grid s_x * s_w.
  double grid_scale = 0;
  // Per channel, the int32 grid s_x * s_w[m] of a conv with a declared weight grid fed by a
  // per-tensor DequantizeLinear (empty otherwise): a BatchNorm folded into that conv may have its
  // shift rounded onto the folded grid (docs/oracle.md, "Folded biases on the int32 grid").
  std::vector<double> bias_grid = {};
};

// The integers a correct engine may produce at grid position t with admitted half-width e:
// [ceil(t - 0.5 - e), floor(t + 0.5 + e)] clamped to [qmin, qmax] (only the limit beyond it).
inline std::pair<double, double> AdmittedRange(double t, double e, int64_t qmin, int64_t qmax) {
  const double mn = static_cast<double>(qmin), mx = static_cast<double>(qmax);
  return {std::clamp(std::ceil(t - 0.5 - e), mn, mx), std::clamp(std::floor(t + 0.5 + e), mn, mx)};
}

// How far (in sigmas) a nonlinear op looks around x to see how an input error moves its output
// (kinks, clamps, steep slopes); the sigma oracle's default factor is the same number.
inline constexpr double kSigmaProbe = 8;
using RefTensorMap = std::map<std::string, RefTensor>;

// Runs a verified graph. `inputs` must hold every graph input with its declared shape (throws
// InputError otherwise). Returns the graph outputs, or every value when `all_values`.
// `rounding`: the QuantizeLinear rounding the judged target declares (ONNX's by default); the
// grid facts admit exactly what it can give for given floats (docs/oracle.md).
RefTensorMap RunReference(const Graph& g, const TensorMap& inputs, bool all_values = false,
                          QuantizeRounding rounding = QuantizeRounding::kHalfEven);

// Float32 view of reference values (rounded to nearest), e.g. to write an outputs file.
Tensor ToFloatTensor(const RefTensor& t);

}  // namespace fusefuzz
