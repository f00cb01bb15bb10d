// Reference Gemm (ONNX: Y = alpha * A' B' + beta * C, with its activation/clamp epilogue applied
// exactly as the unfused ops) and MatMul (A of rank >= 2 times a constant [K, N]). Dot products
// in double; the magnitude of each output is the same computation over absolute values.
#include <cmath>

#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

// Element (i, j) of B' (B or its transpose), as double.
double BAt(const Tensor& b, bool trans, int64_t k, int64_t j) {
  const int64_t cols = b.shape[1];
  return static_cast<double>(trans ? b.data[static_cast<size_t>(j * cols + k)]
                                   : b.data[static_cast<size_t>(k * cols + j)]);
}

RefTensor MatMul(const Node& n, const RefTensor& a) {
  const Tensor& b = n.params.at("B");
  const int64_t k = b.shape[0], cols = b.shape[1];
  const int64_t rows = static_cast<int64_t>(a.value.size()) / k;  // all leading dims together
  Shape out = a.shape;
  out.back() = cols;
  RefTensor y = Zeros(out);
  y.open_sum = static_cast<double>(k);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double r = 0, m = 0, carried = 0, terms_sq = 0, peak = 0, abs_sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const size_t ai = static_cast<size_t>(i * k + p);
        const double w = BAt(b, false, p, j);
        const double term = a.value[ai] * w;
        r += term;
        m += a.mag[ai] * std::fabs(w);
        peak = Peak(std::fmax(peak, a.peak[ai]), w);
        abs_sum += std::fabs(term);
        carried += w * w * a.sigma[ai] * a.sigma[ai];
        terms_sq += term * term;
      }
      y.value[static_cast<size_t>(i * cols + j)] = r;
      y.mag[static_cast<size_t>(i * cols + j)] = m;
      y.peak[static_cast<size_t>(i * cols + j)] = Peak(peak, abs_sum);
      y.sigma[static_cast<size_t>(i * cols + j)] =
          Quadrature(std::sqrt(carried),
                     SumRoundingSigma(static_cast<double>(k), std::fabs(r), std::sqrt(terms_sq)));
    }
  }
  return y;
}

RefTensor Gemm(const Node& n, const RefTensor& a) {
  const GemmDims d = GetGemmDims(n, a.shape);
  const Tensor& b = n.params.at("B");
  const auto c_it = n.params.find("C");
  const Tensor* c = c_it == n.params.end() ? nullptr : &c_it->second;
  RefTensor y = Zeros({d.m, d.n});
  y.open_sum = static_cast<double>(d.k);
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      double r = 0, m = 0, carried = 0, terms_sq = 0, peak = 0, abs_sum = 0;
      for (int64_t p = 0; p < d.k; ++p) {
        const size_t ai = static_cast<size_t>(d.trans_a ? p * d.m + i : i * d.k + p);
        const double w = BAt(b, d.trans_b, p, j);
        const double term = a.value[ai] * w;
        r += term;
        m += a.mag[ai] * std::fabs(w);
        peak = Peak(std::fmax(peak, a.peak[ai]), w);
        abs_sum += std::fabs(term);
        carried += w * w * a.sigma[ai] * a.sigma[ai];
        terms_sq += term * term;
      }
      // The dot product's errors, scaled by alpha; then alpha's product, beta*C and the sum
      // round once each (own).
      double e =
          std::fabs(d.alpha) *
          Quadrature(std::sqrt(carried),
                     SumRoundingSigma(static_cast<double>(d.k), std::fabs(r), std::sqrt(terms_sq)));
      // The dot product's partial sums before alpha scales them.
      peak = Peak(peak, abs_sum * std::fmax(1.0, std::fabs(d.alpha)), d.alpha);
      r *= d.alpha;
      m *= std::fabs(d.alpha);
      double own = std::fabs(r);
      if (c) {
        // C broadcasts to [M, N] from [1], [N], [1, N], [M, 1] or [M, N] (verified).
        const Shape& cs = c->shape;
        const int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                                          : (cs[0] == 1 ? 0 : j);
        const double cv = static_cast<double>(c->data[static_cast<size_t>(ci)]);
        r += d.beta * cv;
        m += std::fabs(d.beta * cv);
        own += std::fabs(d.beta * cv) + std::fabs(r);
        peak = Peak(Peak(peak, cv, d.beta), d.beta * cv);
        // A GEMM with beta = 1 starts its accumulator at C (MLAS, BLAS).
        e = Quadrature(e, FoldedAddendSigma(static_cast<double>(d.k), std::fabs(d.beta * cv)));
      }
      y.value[static_cast<size_t>(i * d.n + j)] = r;
      y.mag[static_cast<size_t>(i * d.n + j)] = m;
      y.peak[static_cast<size_t>(i * d.n + j)] = Peak(peak, r);
      y.sigma[static_cast<size_t>(i * d.n + j)] = Quadrature(e, kU * own);
    }
  }
  const std::string where = NodeWhere(n);
  for (size_t k = 0; k < n.epilogue.size(); ++k) {
    const EpilogueStep& s = n.epilogue[k];
    const std::string step_where = where + " epilogue step " + std::to_string(k);
    switch (s.kind) {
      case EpilogueKind::kActivation:
        ApplyActivation(s.act, s.attrs, s.params, step_where, &y);
        break;
      case EpilogueKind::kClamp:
        ApplyActivation(Op::Clip, s.attrs, {}, step_where, &y);
        break;
      case EpilogueKind::kScaleShift:
      case EpilogueKind::kAdd:
        throw std::logic_error(step_where + ": not a Gemm epilogue step (verifier)");
    }
  }
  return y;
}

}  // namespace

RefTensor RunGemm(const Node& n, const Inputs& in) {
  return n.op == Op::MatMul ? MatMul(n, *in[0]) : Gemm(n, *in[0]);
}

}  // namespace fusefuzz::ref
