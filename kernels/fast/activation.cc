// Elementwise activations in float32. Each op is its own loop (the switch sits outside the
// loop) so the cheap ones vectorize. Comparisons are written so that NaN propagates, as ONNX
// runtimes do, and the formulas avoid cancellation where a naive form would lose digits
// (expm1 for Elu, erfc for Gelu, a sigmoid form for 1 + tanh).
//
// The transcendental ones run on Eigen's packet math (exp, expm1) in chunks that stay in L1,
// or as scalar glibc loops where those measured faster (kScalarExp below); where Eigen's own
// function is not accurate enough (its logistic and tanh are rational approximations, up to
// ~9,000 ulps for sigmoid near x = -9 and ~5 ulps for tanh near 0.004 and near its clamp at
// 7.9) the formula is ours, and the erf Gelu's erfc is ours. Measured errors and the bound they
// must meet: docs/kernels.md "Transcendental activations", activation_ulp_test.cc.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

using FloatArray = Eigen::Map<Eigen::ArrayXf>;

template <typename F>
void Map(float* y, int64_t count, F f) {
  for (int64_t i = 0; i < count; ++i) y[i] = f(y[i]);
}

// Runs f(x, tmp) over chunks of y: x maps the chunk (read and written in place), tmp is scratch of
// the same length. Small chunks keep the temporaries in L1 and need no allocation.
constexpr int64_t kChunk = 256;

template <typename F>
void Chunks(float* y, int64_t count, F f) {
  alignas(64) float scratch[kChunk];
  for (int64_t i = 0; i < count; i += kChunk) {
    const int64_t n = std::min(kChunk, count - i);
    FloatArray x(y + i, n);
    FloatArray tmp(scratch, n);
    f(x, tmp);
  }
}

// e = exp(-|z|) <= 1, which never overflows. Eigen's SSE2 exp stops at 2^-127 for arguments
// below -88.4 (the AVX levels go on into subnormals), which x * e would scale back up to normal
// floats (Silu(-100) would be -3e-37, not -4e-42): below -80 the argument is shifted by 40
// (exactly) and the result scaled by exp(-40), so every level gets the subnormal e right to below
// the oracle's floor 2^-126, and exp(-inf) = 0 (-inf * sigmoid(-inf) is NaN, as in the reference).
// NaN: exp(NaN) is NaN.
template <typename Z>
void ExpMinusAbs(const Z& z, FloatArray& e) {
  constexpr float kShift = 40.0f;
  constexpr float kExpMinusShift = 4.2483542552915889e-18f;  // exp(-40)
  e = (z.abs() > 2 * kShift).select(kShift - z.abs(), -z.abs()).exp();
  e = (z.abs() > 2 * kShift).select(e * kExpMinusShift, e);
}

// x * sigmoid(z) for a chunk, written into x; e is scratch. sigmoid(z) = (z >= 0 ? 1 : e)/(1 + e)
// has no cancellation on either side (Eigen's logistic returns exp(z) for z < -9, off by a
// factor 1 + exp(z), and cancels in p/q + 1/2 just above).
template <typename Z>
void TimesSigmoid(FloatArray& x, const Z& z, FloatArray& e) {
  ExpMinusAbs(z, e);
  x = (z >= 0.0f).select(x, x * e) / (1.0f + e);
}

void SigmoidChunk(FloatArray& x, FloatArray& e) {
  ExpMinusAbs(x, e);
  x = (x >= 0.0f).select(1.0f, e) / (1.0f + e);
}

// tanh(x): an odd Taylor polynomial for |x| < 1/2 (terms through x^17, truncation < 1e-9
// relative), else (1 - e)/(1 + e) with e = exp(-2|x|) <= 1/e (no cancellation: 1 - e >= 0.63).
// Eigen's tanh is a rational approximation clamped at |x| = 7.9, 5-6 ulps off there and near 0.004.
void TanhChunk(FloatArray& x, FloatArray& e) {
  e = (-2.0f * x.abs()).exp();
  const auto big = (1.0f - e) / (1.0f + e);
  const auto x2 = x * x;
  // tanh's Taylor coefficients of x^3 ... x^17, rounded once from double.
  constexpr float c3 = -1.0 / 3, c5 = 2.0 / 15, c7 = -17.0 / 315, c9 = 62.0 / 2835,
                  c11 = -1382.0 / 155925, c13 = 21844.0 / 6081075, c15 = -929569.0 / 638512875,
                  c17 = 6404582.0 / 10854718875;
  const auto poly =
      c3 + x2 * (c5 + x2 * (c7 + x2 * (c9 + x2 * (c11 + x2 * (c13 + x2 * (c15 + x2 * c17))))));
  x = (x.abs() < 0.5f).select(x + x * (x2 * poly), (x < 0.0f).select(-big, big));
}

// Gelu, erf form: x * Phi(x), Phi(x) = erfc(-x/sqrt2) / 2, in Eigen packets (its Array API has
// no erfc, and 1 + erf cancels for x < 0). With t = |x|/sqrt2:
// - t < 1/2: Phi = 1/2 + erf(s)/2, s = x/sqrt2, erf(s) = s * (Taylor series of erf(s)/s in s^2,
//   through s^12: truncation below 1e-9 relative);
// - else erfc(t) = exp(-t^2) * erfcx(t), erfcx a polynomial in t - 5/4 on [1/2, 2] and
//   erfcx(t) = z * g(z), z = 1/t, g a polynomial in z above 2 (both Chebyshev fits to erfcx in
//   40-digit arithmetic, error below 2e-9 absolute); Phi = erfc/2 for x < 0, 1 - erfc/2 else.
// t^2 is x*x/2 (one rounding). Measured against the bound in activation_ulp_test.cc.
namespace erf_gelu {

using Eigen::internal::padd;
using Eigen::internal::pmadd;
using Eigen::internal::pmul;
using Eigen::internal::pset1;
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kLanes = sizeof(Packet) / sizeof(float);

// erf(s) / s in powers of s^2: 2/sqrt(pi) (-1)^n / (n! (2n + 1)).
constexpr float kErfTaylor[] = {1.128379167e+00f,  -3.761263890e-01f, 1.128379167e-01f,
                                -2.686617065e-02f, 5.223977625e-03f,  -8.548327023e-04f,
                                1.205533298e-04f};
// erfcx(t) = exp(t^2) erfc(t) on [1/2, 2] in powers of t - 5/4 (fit error 1.1e-9).
constexpr float kErfcxMid[] = {3.678229165e-01f,  -2.088218881e-01f, 1.067955752e-01f,
                               -5.021784342e-02f, 2.201123123e-02f,  -9.085889478e-03f,
                               3.554425792e-03f,  -1.308697774e-03f, 4.686912827e-04f,
                               -1.924501098e-04f, 6.318043636e-05f};
// t erfcx(t) on [2, inf) in powers of z = 1/t (fit error 1.9e-9; 1/sqrt(pi) at z = 0).
constexpr float kErfcxTail[] = {
    5.641895816e-01f, 7.845494096e-07f,  -2.821497329e-01f, 1.558627480e-03f,  3.997972463e-01f,
    2.074869727e-01f, -2.203734357e+00f, 3.869369917e+00f,  -3.179560764e+00f, 1.073533264e+00f};

// c[0] + v (c[1] + v (c[2] + ...)).
template <size_t N>
inline Packet Horner(const Packet& v, const float (&c)[N]) {
  Packet p = pset1<Packet>(c[N - 1]);
  for (size_t k = N - 1; k-- > 0;) p = pmadd(p, v, pset1<Packet>(c[k]));
  return p;
}

// Every branch is computed and the right one selected (bitwise, so the unused branches' inf/NaN
// do not leak); NaN in x reaches the result through x * Phi.
inline Packet Gelu(const Packet& x) {
  using namespace Eigen::internal;
  const Packet half = pset1<Packet>(0.5f), one = pset1<Packet>(1.0f);
  const Packet h = pmul(pmul(half, x), x);  // t^2
  const Packet s = pmul(x, pset1<Packet>(0.70710678118654752f));
  const Packet t = pabs(s);
  const Packet phi_small = pmadd(half, pmul(s, Horner(h, kErfTaylor)), half);
  const Packet mid = Horner(psub(t, pset1<Packet>(1.25f)), kErfcxMid);
  const Packet z = pdiv(one, t);
  const Packet tail = pmul(z, Horner(z, kErfcxTail));
  const Packet erfc = pmul(pexp(pnegate(h)), pselect(pcmp_lt(t, pset1<Packet>(2.0f)), mid, tail));
  const Packet half_erfc = pmul(half, erfc);
  const Packet phi_big = pselect(pcmp_lt(x, pzero(x)), half_erfc, psub(one, half_erfc));
  return pmul(x, pselect(pcmp_lt(t, half), phi_small, phi_big));
}

// In place; a last partial packet goes through a padded copy, so every element gets the same
// instructions wherever it falls (results do not depend on how the tensor is split).
void Apply(float* y, int64_t count) {
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    Eigen::internal::pstoreu(y + i, Gelu(Eigen::internal::ploadu<Packet>(y + i)));
  }
  if (i < count) {
    alignas(64) float tail[kLanes] = {};
    std::copy(y + i, y + count, tail);
    Eigen::internal::pstoreu(tail, Gelu(Eigen::internal::ploadu<Packet>(tail)));
    std::copy(tail, tail + (count - i), y + i);
  }
}

}  // namespace erf_gelu

// Scalar loops on glibc's expf/expm1f where Eigen's packets measured slower (activation_bench,
// docs/kernels.md "Transcendental activations"): Elu in the SSE2 copy, Silu and the tanh Gelu
// in the SSE2 and AVX2 copies. Same formulas, measured by the same ulp test.
#if defined(__AVX2__)
constexpr bool kScalarExpm1 = false;
#else
constexpr bool kScalarExpm1 = true;
#endif
#if defined(__AVX512F__)
constexpr bool kScalarExp = false;
#else
constexpr bool kScalarExp = true;
#endif

// x * sigmoid(z) as TimesSigmoid, one element: e = exp(-|z|) (glibc's expf is right into the
// subnormals, so no shift is needed), NaN propagates, -inf * sigmoid(-inf) is NaN.
inline float ScalarTimesSigmoid(float x, float z) {
  const float e = std::exp(-std::fabs(z));
  return (z >= 0.0f ? x : x * e) / (1.0f + e);
}

}  // namespace

Activation MakeActivation(Op op, const AttrMap& attrs, const ParamMap& params,
                          const std::string& where) {
  if (!IsActivation(op)) throw InputError(where, std::string(OpName(op)) + " is not an activation");
  Activation a;
  a.op = op;
  switch (op) {
    case Op::Clip:
      a.lo = static_cast<float>(AttrFloat(op, attrs, "min", where));
      a.hi = static_cast<float>(AttrFloat(op, attrs, "max", where));
      break;
    case Op::LeakyRelu:
    case Op::Elu:
      a.alpha = static_cast<float>(AttrFloat(op, attrs, "alpha", where));
      break;
    case Op::HardSigmoid:
      a.alpha = static_cast<float>(AttrFloat(op, attrs, "alpha", where));
      a.beta = static_cast<float>(AttrFloat(op, attrs, "beta", where));
      break;
    case Op::Gelu:
      a.gelu_tanh = AttrString(op, attrs, "approximate", where) == "tanh";
      break;
    case Op::PRelu: {
      auto it = params.find("slope");
      if (it == params.end() || it->second.data.empty()) {
        throw InputError(where, "PRelu needs param 'slope'");
      }
      a.slope = it->second.data;
      break;
    }
    default:
      break;
  }
  return a;
}

// PRelu here is an epilogue step's, whose slope is per channel ([M, 1, 1], [N]) or [1]: `channel`
// indexes it. A PRelu node broadcasts its slope in PReluOp instead.
void ApplyActivation(const Activation& a, float* y, int64_t count, int64_t channel) {
  switch (a.op) {
    case Op::Relu:
      return Map(y, count, [](float x) { return x < 0.0f ? 0.0f : x; });
    case Op::Relu6:
      return Map(y, count, [](float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); });
    case Op::Clip: {
      const float lo = a.lo, hi = a.hi;
      // min(max(x, lo), hi) as ONNX: hi everywhere when lo > hi; NaN propagates.
      return Map(y, count, [lo, hi](float x) {
        const float t = x < lo ? lo : x;
        return t > hi ? hi : t;
      });
    }
    case Op::LeakyRelu: {
      const float alpha = a.alpha;
      return Map(y, count, [alpha](float x) { return x >= 0.0f ? x : alpha * x; });
    }
    case Op::PRelu: {
      const float s = a.slope.size() == 1 ? a.slope[0] : a.slope[static_cast<size_t>(channel)];
      return Map(y, count, [s](float x) { return x >= 0.0f ? x : s * x; });
    }
    case Op::Elu: {
      const float alpha = a.alpha;
      if (kScalarExpm1) {
        return Map(y, count, [alpha](float x) { return x >= 0.0f ? x : alpha * std::expm1(x); });
      }
      // Eigen's expm1 (exp, corrected through log: relative error ~1 ulp down to x = -2^-24).
      return Chunks(y, count, [alpha](FloatArray& x, FloatArray& e) {
        e = x.expm1();
        x = (x >= 0.0f).select(x, alpha * e);
      });
    }
    case Op::Sigmoid:
      return Chunks(y, count, SigmoidChunk);
    case Op::HardSigmoid: {
      const float alpha = a.alpha, beta = a.beta;
      return Map(y, count, [alpha, beta](float x) {
        float v = alpha * x + beta;
        return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
      });
    }
    case Op::Tanh:
      return Chunks(y, count, TanhChunk);
    case Op::Silu:
      if (kScalarExp) return Map(y, count, [](float x) { return ScalarTimesSigmoid(x, x); });
      return Chunks(y, count, [](FloatArray& x, FloatArray& e) { TimesSigmoid(x, x, e); });
    case Op::HardSwish:
      return Map(y, count, [](float x) {
        float v = x / 6.0f + 0.5f;
        return x * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
      });
    case Op::Gelu:
      if (a.gelu_tanh) {
        // 0.5x(1 + tanh(z)) == x * sigmoid(2z): no cancellation for negative x.
        const float k2 = 2 * 0.7978845608028654f;  // 2 sqrt(2/pi)
        if (kScalarExp) {
          return Map(y, count, [k2](float x) {
            return ScalarTimesSigmoid(x, k2 * (x + 0.044715f * x * x * x));
          });
        }
        return Chunks(y, count, [k2](FloatArray& x, FloatArray& e) {
          TimesSigmoid(x, k2 * (x + 0.044715f * x * x * x), e);
        });
      }
      // 0.5x(1 + erf(x/sqrt2)) == 0.5x * erfc(-x/sqrt2): no cancellation for negative x. Our
      // own packet erfc (above): Eigen 3.4 has none (it maps ::erfcf), and its packet erf in
      // 1 + erf cancels for x < 0 and is 3 ulps off for x > 0.
      return erf_gelu::Apply(y, count);
    default:
      throw InputError("", std::string(OpName(a.op)) + " is not an activation");
  }
}

namespace {

// A PRelu node: the slope broadcasts to x from the right (ONNX). Both shapes are padded to rank
// 4 with leading 1s; planes (dims 0, 1) run in parallel, and each row (dim 3) reads the slope
// with stride 1 along W or one value for the whole row.
void PReluOp(const Activation& a, const Shape& slope_shape, const Tensor& x, int threads,
             Tensor& y) {
  int64_t xs[4] = {1, 1, 1, 1}, ss[4] = {1, 1, 1, 1}, stride[4] = {0, 0, 0, 0};
  const size_t xr = x.shape.size(), sr = slope_shape.size();
  for (size_t d = 0; d < xr; ++d) xs[4 - xr + d] = x.shape[d];
  for (size_t d = 0; d < sr; ++d) ss[4 - sr + d] = slope_shape[d];
  int64_t step = 1;
  for (int d = 3; d >= 0; --d) {
    if (ss[d] != 1) stride[d] = step;
    step *= ss[d];
  }
  const float* s = a.slope.data();
  ParallelFor(threads, xs[0] * xs[1], [&](int64_t p) {
    const int64_t n = p / xs[1], c = p % xs[1];
    for (int64_t h = 0; h < xs[2]; ++h) {
      const int64_t row = (p * xs[2] + h) * xs[3];
      const float* in = x.data.data() + row;
      float* out = y.data.data() + row;
      const float* sr_row = s + n * stride[0] + c * stride[1] + h * stride[2];
      if (stride[3] == 0) {
        const float v = *sr_row;
        for (int64_t w = 0; w < xs[3]; ++w) out[w] = in[w] >= 0.0f ? in[w] : v * in[w];
      } else {
        for (int64_t w = 0; w < xs[3]; ++w) out[w] = in[w] >= 0.0f ? in[w] : sr_row[w] * in[w];
      }
    }
  });
}

}  // namespace

void ActivationOp(const Node& n, const Tensor& x, int threads, Tensor& y) {
  Activation a = MakeActivation(n.op, n.attrs, n.params, "node '" + n.name + "'");
  if (n.op == Op::PRelu) return PReluOp(a, n.params.at("slope").shape, x, threads, y);
  std::copy(x.data.begin(), x.data.end(), y.data.begin());
  // Planes of one channel; rank 1 is one plane. (The channel argument is unused here: a PRelu
  // node broadcasts its slope in PReluOp; only epilogue steps apply a slope per channel.)
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t channels = rank >= 2 ? x.shape[1] : 1;
  int64_t inner = 1;
  for (int64_t d = 2; d < rank; ++d) inner *= x.shape[static_cast<size_t>(d)];
  const int64_t planes = rank >= 2 ? x.shape[0] * channels : 1;
  if (rank < 2) inner = x.size();
  ParallelFor(threads, planes, [&](int64_t p) {
    ApplyActivation(a, y.data.data() + p * inner, inner, p % channels);
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
