// Elementwise activations in float32. Each op is its own loop (the switch sits outside the
// loop) so the cheap ones vectorize. Comparisons are written so that NaN propagates, as ONNX
// runtimes do, and the formulas avoid cancellation where a naive form would lose digits
// (expm1 for Elu, erfc for Gelu, a sigmoid form for 1 + tanh).
//
// The transcendental ones run on Eigen's packet math (exp, expm1), one packet at a time,
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

template <typename F>
void Map(float* y, int64_t count, F f) {
  for (int64_t i = 0; i < count; ++i) y[i] = f(y[i]);
}

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int kLanes = sizeof(Packet) / sizeof(float);

// Applies the packet function f to y in place; a last partial packet goes through a padded
// copy, so every element gets the same instructions wherever it falls (results do not depend on
// how the tensor is split). Written on Eigen's packet primitives because Eigen 3.4 evaluates an
// Array expression that contains select() one scalar at a time (perf showed the tanh chunk's
// select as a scalar vmovss/vfmadd132ss loop: 2-3 ns per element at every level).
template <typename F>
void Packets(float* y, int64_t count, F f) {
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    Eigen::internal::pstoreu(y + i, f(Eigen::internal::ploadu<Packet>(y + i)));
  }
  if (i < count) {
    alignas(64) float tail[kLanes] = {};
    std::copy(y + i, y + count, tail);
    Eigen::internal::pstoreu(tail, f(Eigen::internal::ploadu<Packet>(tail)));
    std::copy(tail, tail + (count - i), y + i);
  }
}

// exp(-|z|) <= 1, which never overflows. Eigen's SSE2 exp stops at 2^-127 for arguments below
// -88.4 (the AVX levels go on into subnormals), which x * e would scale back up to normal floats
// (Silu(-100) would be -3e-37, not -4e-42): below -80 the argument is shifted by 40 (exactly)
// and the result scaled by exp(-40), so every level gets the subnormal e right to below the
// oracle's floor 2^-126, and exp(-inf) = 0 (-inf * sigmoid(-inf) is NaN, as in the reference).
// NaN: exp(NaN) is NaN.
inline Packet ExpMinusAbs(const Packet& z) {
  using namespace Eigen::internal;
  constexpr float kShift = 40.0f;
  constexpr float kExpMinusShift = 4.2483542552915889e-18f;  // exp(-40)
  const Packet a = pabs(z);
  const Packet far = pcmp_lt(pset1<Packet>(2 * kShift), a);
  const Packet e = pexp(pselect(far, psub(pset1<Packet>(kShift), a), pnegate(a)));
  return pselect(far, pmul(e, pset1<Packet>(kExpMinusShift)), e);
}

// x * sigmoid(z) = (z >= 0 ? x : x e) / (1 + e), e = exp(-|z|): no cancellation on either side
// (Eigen's logistic returns exp(z) for z < -9, off by a factor 1 + exp(z), and cancels in
// p/q + 1/2 just above). NaN in z: z >= 0 is false and x * NaN is NaN.
inline Packet TimesSigmoid(const Packet& x, const Packet& z) {
  using namespace Eigen::internal;
  const Packet e = ExpMinusAbs(z);
  return pdiv(pselect(pcmp_le(pzero(z), z), x, pmul(x, e)), padd(pset1<Packet>(1.0f), e));
}

inline Packet Sigmoid(const Packet& x) {
  return TimesSigmoid(Eigen::internal::pset1<Packet>(1.0f), x);
}

// tanh(x): an odd Taylor polynomial for |x| < 1/2 (terms through x^17, truncation < 1e-9
// relative), else (1 - e)/(1 + e) with e = exp(-2|x|) <= 1/e (no cancellation: 1 - e >= 0.63).
// Eigen's tanh is a rational approximation clamped at |x| = 7.9, 5-6 ulps off there and near 0.004.
// NaN: |x| < 1/2 and x < 0 are false, and (1 - NaN)/(1 + NaN) is NaN.
inline Packet Tanh(const Packet& x) {
  using namespace Eigen::internal;
  // tanh's Taylor coefficients of x^3 ... x^17, rounded once from double.
  static constexpr float kOdd[] = {
      -1.0 / 3,         2.0 / 15,          -17.0 / 315,           62.0 / 2835,
      -1382.0 / 155925, 21844.0 / 6081075, -929569.0 / 638512875, 6404582.0 / 10854718875};
  const Packet one = pset1<Packet>(1.0f);
  const Packet a = pabs(x);
  const Packet e = pexp(pmul(pset1<Packet>(-2.0f), a));
  const Packet big = pdiv(psub(one, e), padd(one, e));
  const Packet x2 = pmul(x, x);
  Packet poly = pset1<Packet>(kOdd[7]);
  for (int k = 6; k >= 0; --k) poly = pmadd(poly, x2, pset1<Packet>(kOdd[k]));
  const Packet small = pmadd(x, pmul(x2, poly), x);
  const Packet signed_big = pselect(pcmp_lt(x, pzero(x)), pnegate(big), big);
  return pselect(pcmp_lt(a, pset1<Packet>(0.5f)), small, signed_big);
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

}  // namespace erf_gelu

// Scalar loops on glibc's expf/expm1f where Eigen's packets measured slower (activation_bench,
// docs/kernels.md "Transcendental activations"): Elu, Silu and the tanh Gelu in the SSE2 copy.
// Same formulas, measured by the same ulp test.
#if defined(__AVX2__)
constexpr bool kScalarExpm1 = false;
#else
constexpr bool kScalarExpm1 = true;
#endif
#if defined(__AVX2__)
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
      return Packets(y, count, [alpha](const Packet& x) {
        using namespace Eigen::internal;
        const Packet e = pexpm1(x);
        return pselect(pcmp_le(pzero(x), x), x, pmul(pset1<Packet>(alpha), e));
      });
    }
    case Op::Sigmoid:
      return Packets(y, count, Sigmoid);
    case Op::HardSigmoid: {
      const float alpha = a.alpha, beta = a.beta;
      return Map(y, count, [alpha, beta](float x) {
        float v = alpha * x + beta;
        return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
      });
    }
    case Op::Tanh:
      return Packets(y, count, Tanh);
    case Op::Silu:
      if (kScalarExp) return Map(y, count, [](float x) { return ScalarTimesSigmoid(x, x); });
      return Packets(y, count, [](const Packet& x) { return TimesSigmoid(x, x); });
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
        return Packets(y, count, [k2](const Packet& x) {
          using namespace Eigen::internal;
          const Packet cube = pmul(pmul(pmul(pset1<Packet>(0.044715f), x), x), x);
          return TimesSigmoid(x, pmul(pset1<Packet>(k2), padd(x, cube)));
        });
      }
      // 0.5x(1 + erf(x/sqrt2)) == 0.5x * erfc(-x/sqrt2): no cancellation for negative x. Our
      // own packet erfc (above): Eigen 3.4 has none (it maps ::erfcf), and its packet erf in
      // 1 + erf cancels for x < 0 and is 3 ulps off for x > 0.
      return Packets(y, count, erf_gelu::Gelu);
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
