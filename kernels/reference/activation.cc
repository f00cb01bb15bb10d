// Reference activations. Each element gets r = f(x) and m = L * m_x + |r|, where L is the
// largest |f'| over the whole real line (so the bound holds wherever x moved within its error)
// and |r| covers the rounding of f itself (docs/reference.md, "Activations").
#include <cmath>
#include <vector>

#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// max |f'| of x*sigmoid(x): at x = 2.39936 (root of x*tanh(x/2) = 2), f' = 1.0998393; rounded up.
constexpr double kSiluLipschitz = 1.09984;
// max |f'| of the erf GELU: at x = sqrt(2), f' = Phi(sqrt2) + exp(-1)/sqrt(pi) = 1.1289041452.
constexpr double kGeluErfLipschitz = 1.128905;
// max |f'| of the tanh GELU: at x = 1.41850, f' = 1.1289930687 (numerically); rounded up.
constexpr double kGeluTanhLipschitz = 1.128994;
// HardSwish: f' = x/3 + 1/2 on [-3, 3], ranging over [-1/2, 3/2]; 1 above, 0 below.
constexpr double kHardSwishLipschitz = 1.5;

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

// ONNX's min(max(x, lo), hi): hi everywhere when lo > hi. Written so that NaN propagates (every
// comparison with NaN is false and falls through to x).
double ClipTo(double x, double lo, double hi) {
  const double t = x < lo ? lo : x;
  return t > hi ? hi : t;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A transcendental activation's own error in units of u|r| (the bound admits 4: docs/oracle.md,
// "Transcendental activations in ulps"); the piecewise-linear ones round once.
double OwnUlps(Op act) {
  switch (act) {
    case Op::Elu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::Gelu:
      return 2;
    default:
      return 1;
  }
}

// Absolute error (in units of u) admitted beyond the relative one: for the transcendental ones
// 2*L*|x|, which makes 8 sigmas of an exact input exactly the bound oracle's k = 16 for one such
// stage (16u(L|x| + |r|)). Kernels earn it: the GELUs' 1 + erf/tanh tails cancel, and engines
// approximate the logistic with an absolute, not a relative, error (MLAS: 0 for x < -18).
// HardSigmoid/HardSwish: their affine cancels inside the clamp.
double OwnAbsolute(Op act, double x, double alpha, double beta, double lipschitz) {
  switch (act) {
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::Gelu:
      return 2 * lipschitz * std::fabs(x);
    case Op::HardSigmoid:
      return std::fabs(alpha * x) + std::fabs(beta);
    case Op::HardSwish:
      return std::fabs(x) <= 3 ? std::fabs(x) * (std::fabs(x) / 6 + 0.5) : 0.0;
    default:
      return 0;
  }
}

// L * m without producing NaN from 0 * inf when the activation is flat.
double Scaled(double lipschitz, double m) { return lipschitz == 0.0 ? 0.0 : lipschitz * m; }

}  // namespace

void ApplyActivation(Op act, const AttrMap& attrs, const ParamMap& params, const std::string& where,
                     RefTensor* t) {
  auto attr = [&](const char* name) { return AttrFloat(act, attrs, name, where); };
  double alpha = 0, beta = 0, lo = 0, hi = 0;
  bool gelu_tanh = false;
  RefTensor slope;
  switch (act) {
    case Op::LeakyRelu:
    case Op::Elu:
      alpha = attr("alpha");
      break;
    case Op::HardSigmoid:
      alpha = attr("alpha");
      beta = attr("beta");
      break;
    case Op::Clip:
      lo = attr("min");
      hi = attr("max");
      break;
    case Op::Gelu:
      gelu_tanh = AttrString(act, attrs, "approximate", where) == "tanh";
      break;
    case Op::PRelu:
      slope = FromFloat(params.at("slope"));
      break;
    default:
      break;
  }
  // PRelu: the slope broadcasts to t from the right (ONNX); `slope_stride` are its element
  // strides per dim of t (0 where it broadcasts) and `idx` the multi-index of element i.
  const size_t rank = t->shape.size();
  std::vector<int64_t> slope_stride(rank, 0), idx(rank, 0);
  if (act == Op::PRelu) {
    int64_t stride = 1;
    for (size_t k = 0; k < slope.shape.size(); ++k) {
      const size_t d = slope.shape.size() - 1 - k;
      if (slope.shape[d] != 1) slope_stride[rank - 1 - k] = stride;
      stride *= slope.shape[d];
    }
  }

  // f(x) for element slope index c (PRelu), with its Lipschitz constant and `cancel`: the scale
  // of intermediates that the float32 evaluation of f's defining formula rounds before they
  // cancel, beyond |r| (docs/oracle.md, "Faithful float32 formulas").
  auto eval = [&](double x, size_t c, double* lipschitz, double* cancel) {
    double r = x;
    *lipschitz = 1.0;
    *cancel = 0;
    switch (act) {
      case Op::Relu:
        r = x < 0 ? 0.0 : x;
        break;
      case Op::Relu6:
        r = ClipTo(x, 0.0, 6.0);
        break;
      case Op::Clip:
        r = ClipTo(x, lo, hi);
        break;
      case Op::LeakyRelu:
        r = x < 0 ? alpha * x : x;
        *lipschitz = std::fmax(1.0, std::fabs(alpha));
        break;
      case Op::PRelu:
        r = x < 0 ? slope.value[c] * x : x;
        *lipschitz = std::fmax(1.0, slope.mag[c]);
        break;
      case Op::Elu:
        // expm1: exp(x) - 1 without cancellation near 0; f' = alpha*exp(x) < |alpha| for x < 0.
        r = x < 0 ? alpha * std::expm1(x) : x;
        *lipschitz = std::fmax(1.0, std::fabs(alpha));
        // The ONNX formula alpha*(exp(x) - 1) in float32 rounds exp(x) by a few u*exp(x) before
        // the subtraction cancels it (|r| + |alpha|*exp(x) is exactly |alpha| for x < 0).
        if (x < 0) *cancel = std::fabs(alpha) * std::exp(x);
        break;
      case Op::Sigmoid:
        r = Sigmoid(x);
        *lipschitz = 0.25;
        break;
      case Op::HardSigmoid:
        r = ClipTo(alpha * x + beta, 0.0, 1.0);
        *lipschitz = std::fabs(alpha);
        break;
      case Op::Tanh:
        r = std::tanh(x);
        break;
      case Op::Silu:
        r = x * Sigmoid(x);
        *lipschitz = kSiluLipschitz;
        break;
      case Op::HardSwish:
        r = x * ClipTo(x / 6.0 + 0.5, 0.0, 1.0);
        *lipschitz = kHardSwishLipschitz;
        break;
      case Op::Gelu:
        if (gelu_tanh) {
          // 0.5x(1 + tanh(y)) == x / (1 + exp(-2y)), which avoids cancelling 1 + tanh(y) for
          // y << 0 (the reference should be accurate far below float32 rounding).
          const double y = kSqrt2OverPi * (x + 0.044715 * x * x * x);
          r = x / (1.0 + std::exp(-2.0 * y));
          *lipschitz = kGeluTanhLipschitz;
        } else {
          // 0.5x(1 + erf(x/sqrt2)) == 0.5x * erfc(-x/sqrt2), accurate also for x << 0.
          r = 0.5 * x * std::erfc(-x / kSqrt2);
          *lipschitz = kGeluErfLipschitz;
        }
        break;
      default:
        throw std::logic_error("ApplyActivation: not an activation: " + std::string(OpName(act)));
    }
    return r;
  };

  for (size_t i = 0; i < t->value.size(); ++i) {
    const double x = t->value[i];
    size_t c = 0;
    if (act == Op::PRelu) {
      int64_t k = 0;
      for (size_t d = 0; d < rank; ++d) k += idx[d] * slope_stride[d];
      for (size_t d = rank; d-- > 0;) {  // advance the multi-index of t
        if (++idx[d] < t->shape[d]) break;
        idx[d] = 0;
      }
      c = static_cast<size_t>(k);
    }
    double lipschitz = 1.0, cancel = 0, unused_l = 0, unused_c = 0;
    const double r = eval(x, c, &lipschitz, &cancel);
    // How the input error moves the output: f's actual change over x +- kSigmaProbe * sigma
    // (a kink, clamp or steep slope within reach counts; linearizing at x would miss them).
    double carried = 0;
    const double reach = kSigmaProbe * t->sigma[i];
    if (reach > 0 && std::isfinite(x)) {
      const double up = eval(x + reach, c, &unused_l, &unused_c);
      const double down = eval(x - reach, c, &unused_l, &unused_c);
      carried = std::fmax(std::fabs(up - r), std::fabs(down - r)) / kSigmaProbe;
    }
    // Its own rounding: one rounding (u|r|) for the piecewise-linear ops, a few ulps for the
    // transcendental ones, plus what the formula rounds before it cancels.
    t->sigma[i] = Quadrature(carried, kU * (OwnUlps(act) * std::fabs(r) + cancel +
                                            OwnAbsolute(act, x, alpha, beta, lipschitz)));
    t->value[i] = r;
    t->mag[i] = Scaled(lipschitz, t->mag[i]) + std::fabs(r) + cancel;
    // Its constants are leaves (a slope meets every element in a select-free formulation);
    // Clip's bounds are not: a bound beyond the format clamps nothing, as it should.
    t->peak[i] = Peak(Peak(t->peak[i], r, alpha), act == Op::PRelu ? slope.value[c] : beta);
  }
  t->open_sum = 0;  // nothing after an activation folds into the sum before it
}

RefTensor RunActivation(const Node& n, const Inputs& in) {
  RefTensor t = *in[0];
  t.spread.clear();
  t.spread_key.clear();  // the activation rule recomputes sigma: no longer a spread part in it
  ApplyActivation(n.op, n.attrs, n.params, NodeWhere(n), &t);
  return t;
}

}  // namespace fusefuzz::ref
