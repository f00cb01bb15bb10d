// Internal to the reference interpreter: one entry point per op family (one .cc file each) and
// the few helpers they share. Every function takes its node's input values already evaluated
// (in node.inputs order) and returns the output value with its magnitude (docs/reference.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/reference/reference.h"

namespace fusefuzz::ref {

using Inputs = std::vector<const RefTensor*>;

// float -> double is exact; the magnitude of a given value is its absolute value, its error 0.
inline RefTensor FromFloat(const Tensor& t) {
  RefTensor r;
  r.shape = t.shape;
  r.value.resize(t.data.size());
  r.mag.resize(t.data.size());
  r.sigma.assign(t.data.size(), 0.0);
  for (size_t i = 0; i < t.data.size(); ++i) {
    r.value[i] = static_cast<double>(t.data[i]);
    r.mag[i] = std::fabs(r.value[i]);
  }
  r.peak = r.mag;
  return r;
}

inline RefTensor Zeros(const Shape& shape) {
  RefTensor r;
  r.shape = shape;
  r.value.assign(static_cast<size_t>(NumElements(shape)), 0.0);
  r.mag.assign(r.value.size(), 0.0);
  r.sigma.assign(r.value.size(), 0.0);
  r.peak.assign(r.value.size(), 0.0);
  return r;
}

// Float32 unit roundoff (the reference's own copy: it shares no code with the oracles).
inline constexpr double kU = 0x1.0p-24;

// The error scale of a float32 sum of n terms (a dot product, a pooling window) in any order,
// rounded to nearest: each of its <= n + 1 roundings errs by at most u times the partial sum
// (uniformly, so with deviation u|s|/sqrt3), and in a random order the partial sums are about
// |total| and the terms' root-sum-square (docs/oracle.md, "The sigma oracle").
inline double SumRoundingSigma(double n, double total_abs, double terms_rss) {
  return kU * std::sqrt((n + 1) / 3) * (total_abs + terms_rss);
}

// The extra rounding of a sum of n terms whose accumulator also carries `addend` (a shift or a
// residual folded into it): its partial sums are offset by |addend| each.
inline double FoldedAddendSigma(double open_sum, double addend_abs) {
  return open_sum > 0 ? kU * std::sqrt((open_sum + 1) / 3) * addend_abs : 0.0;
}

// Root of a sum of squares of independent error scales.
inline double Quadrature(double a, double b) { return std::sqrt(a * a + b * b); }

// The larger of a peak and |v| (or of several values); NaNs are skipped (fmax), so a NaN leaf
// does not hide the others (the oracle judges a NaN result by its own rule).
inline double Peak(double p, double v) { return std::fmax(p, std::fabs(v)); }
inline double Peak(double p, double v, double w) { return Peak(Peak(p, v), w); }

// Row-major offset of (n, c, h, w) in a rank-4 shape.
inline size_t At4(const Shape& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return static_cast<size_t>(((n * s[1] + c) * s[2] + h) * s[3] + w);
}

// Product of the dims from `from` on (1 when none): the "inner" size behind a channel dim.
inline int64_t InnerSize(const Shape& s, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < s.size(); ++i) n *= s[i];
  return n;
}

// Raises m to |r| where the rule's estimate fell short (never touches NaN magnitudes).
inline void KeepAtLeastAbs(double r, double* m) {
  if (std::fabs(r) > *m) *m = std::fabs(r);
}

std::string NodeWhere(const Node& n);

RefTensor RunConv(const Node& n, const Inputs& in);        // conv.cc (Conv, FusedConv)
RefTensor RunNorm(const Node& n, const Inputs& in);        // norm.cc
RefTensor RunActivation(const Node& n, const Inputs& in);  // activation.cc
RefTensor RunBinary(const Node& n, const Inputs& in);      // binary.cc
RefTensor RunPad(const Node& n, const Inputs& in);         // pad.cc
RefTensor RunPool(const Node& n, const Inputs& in);        // pool.cc
RefTensor RunConcat(const Node& n, const Inputs& in);      // concat.cc (Concat, Identity, Flatten,
                                                           // Reshape, Transpose)
RefTensor RunGemm(const Node& n, const Inputs& in);        // gemm.cc (Gemm, MatMul)
RefTensor RunReduce(const Node& n, const Inputs& in);      // math.cc (ReduceMean, ReduceSum,
                                                           // ReduceMax, Softmax)
RefTensor RunMath(const Node& n, const Inputs& in);        // math.cc (Pow, Sqrt, Reciprocal,
                                                           // Exp, Log, Erf)

// activation.cc: applies `act` (with its attrs/params) in place; the channel is dim 1.
// Used by Relu.. nodes and by FusedConv activation and clamp epilogue steps.
void ApplyActivation(Op act, const AttrMap& attrs, const ParamMap& params, const std::string& where,
                     RefTensor* t);
// binary.cc: a op b with numpy broadcasting and the binary magnitude rules.
RefTensor Elementwise(Op op, const RefTensor& a, const RefTensor& b);

}  // namespace fusefuzz::ref
