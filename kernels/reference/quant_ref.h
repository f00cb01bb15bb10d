// Internal to the reference: the quantized ops (kernels/reference/quant.cc, qlinear_conv.cc) and
// the helpers that carry an integer tensor's admitted spread into the float values computed from
// it (docs/oracle.md, "The integer-grid oracle").
#pragma once

#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {

// quant.cc: Q, DQ, QLinearAdd; `rounding` is the judged target's declared QuantizeLinear rule.
RefTensor RunQuant(const Node& n, const Inputs& in, QuantizeRounding rounding);
RefTensor RunQLinearConv(const Node& n, const Inputs& in);  // qlinear_conv.cc

// How far, in steps, a correct engine's integer may lie from the reference's integer at element
// i of an integer-valued tensor: from its admitted range when it has grid facts, else from the
// deviation its magnitude and sigma carry. 0 for given integers.
double IntegerSpread(const RefTensor& x, size_t i);
// The same from the sigma machinery's half-width grid_es (docs/oracle.md, "Carried spread in
// quadrature"); <= IntegerSpread.
double IntegerSpreadSigma(const RefTensor& x, size_t i);
// The admitted deviation of a float value: its one-rounding bound u*m (which holds every
// carried spread, AddDeviation) or kSigmaProbe sigmas of its float32 evaluation, the larger.
double FloatDeviation(const RefTensor& x, size_t i);
// Adds a legitimate deviation `dev` (value units) to element i: into the magnitude as dev/u, so
// the bound oracle and the next quantization see it once, and to sigma as dev/kSigmaProbe.
void AddDeviation(RefTensor* y, size_t i, double dev);
// Adds an integer tensor's carried spread: its L1 reach `dev` (value units) into the magnitude,
// its quadrature reach `dev_sigma` (<= dev) into sigma as dev_sigma/kSigmaProbe, linearly: the
// spread is a whole step, which the float32 roundings of the same value add to, not a Gaussian
// error they combine with in quadrature (docs/oracle.md, "Carried spread in quadrature").
void AddSpread(RefTensor* y, size_t i, double dev, double dev_sigma);
// Which flips of an integer tensor go together in a weighted sum: elements at one grid position
// t (copies of one computation) share a key, t itself (the value for integers without grid
// facts). docs/oracle.md, "Carried spread in quadrature".
double SpreadKey(const RefTensor& x, size_t i);

// The quadrature sum of carried spreads over the taps of one weighted sum (docs/oracle.md,
// "Carried spread in quadrature"): taps at the same grid position t are, as far as the reference
// can tell, copies of one computation (a repeated value, a MaxPool's winner in overlapping
// windows), whose flips go together, so they add linearly within a group and in quadrature
// across groups. Only taps with a spread are recorded.
class SpreadSum {
 public:
  void Clear() { taps_.clear(); }
  void Add(double t, double reach) {
    if (reach > 0) taps_.push_back({t, reach});
  }
  double Total();  // sqrt(sum over groups of (sum of reach in the group)^2)

 private:
  std::vector<std::pair<double, double>> taps_;
};

// Magnitude and sigma of an integer-valued tensor from its grid facts.
void SetGridMagnitudes(RefTensor* y);
// Input `input` of a quantized op must hold integers of `type` (exact floats).
void CheckIntegers(const Node& n, size_t input, const RefTensor& x, QuantType type);
// A Conv/FusedConv with a weight grid and a bias, fed by a per-tensor DequantizeLinear: admits
// the bias' distance to the int32 grid s_x * s_w per channel (the engine may round it there).
void AdmitBiasRounding(const Node& n, const RefTensor& x, RefTensor* y);

}  // namespace fusefuzz::ref
