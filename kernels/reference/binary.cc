// Reference Add/Sub/Mul/Div/Min/Max with numpy broadcasting; either operand may be a constant
// param.
#include <cmath>

#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

constexpr double kFloatMinNormal = 0x1.0p-126;

// Strides of `s` right-aligned to an output of rank `rank`, 0 along broadcast dims.
std::vector<int64_t> BroadcastStrides(const Shape& s, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t k = 0; k < s.size(); ++k) {
    const size_t d = s.size() - 1 - k;  // walk dims from the last
    if (s[d] != 1) strides[rank - 1 - k] = stride;
    stride *= s[d];
  }
  return strides;
}

}  // namespace

RefTensor Elementwise(Op op, const RefTensor& a, const RefTensor& b) {
  Shape out_shape;
  if (!BroadcastShapes(a.shape, b.shape, &out_shape)) {
    throw std::logic_error("Elementwise: shapes " + ShapeToString(a.shape) + " and " +
                           ShapeToString(b.shape) + " do not broadcast (unverified graph)");
  }
  const size_t rank = out_shape.size();
  const std::vector<int64_t> sa = BroadcastStrides(a.shape, rank);
  const std::vector<int64_t> sb = BroadcastStrides(b.shape, rank);
  RefTensor y = Zeros(out_shape);
  y.open_sum = std::max(a.open_sum, b.open_sum);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < y.value.size(); ++i) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < rank; ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    const double va = a.value[static_cast<size_t>(ia)], vb = b.value[static_cast<size_t>(ib)];
    const double ma = a.mag[static_cast<size_t>(ia)], mb = b.mag[static_cast<size_t>(ib)];
    const double ea = a.sigma[static_cast<size_t>(ia)], eb = b.sigma[static_cast<size_t>(ib)];
    // e: the operands' errors carried to the result (independent, so in quadrature); the
    // result's own rounding is one u|r| (two for Div: x * (1/c)).
    // folded: an addend that an optimizer may fold into the accumulator of the sum that made the
    // other operand (a constant shift into a conv bias, a residual into a GEMM with beta = 1).
    double r = 0, m = 0, e = 0, own = 1, folded = 0;
    switch (op) {
      case Op::Add:
        r = va + vb;
        m = ma + mb;
        e = Quadrature(ea, eb);
        folded = std::max(FoldedAddendSigma(a.open_sum, std::fabs(vb)),
                          FoldedAddendSigma(b.open_sum, std::fabs(va)));
        break;
      case Op::Sub:
        r = va - vb;
        m = ma + mb;
        e = Quadrature(ea, eb);
        folded = std::max(FoldedAddendSigma(a.open_sum, std::fabs(vb)),
                          FoldedAddendSigma(b.open_sum, std::fabs(va)));
        break;
      case Op::Mul:
        // First-order propagation of both operands' errors; the product's own rounding
        // (u*|a*b|) is covered because m_a >= |a|.
        r = va * vb;
        m = ma * std::fabs(vb) + std::fabs(va) * mb;
        e = Quadrature(ea * std::fabs(vb), std::fabs(va) * eb);
        break;
      case Op::Div:
        r = va / vb;
        m = (ma + std::fabs(r) * mb) / std::fabs(vb);
        // A divisor below float32's normal range (2^-126) is held only to an absolute error, or
        // flushed to 0 (FTZ): the float32 quotient has no relative bound (it may be inf or 0/0
        // = NaN), so it is not judged, as an overflow (docs/oracle.md, "Underflow").
        if (std::fabs(vb) < kFloatMinNormal) m = INFINITY;
        e = Quadrature(ea, std::fabs(r) * eb) / std::fabs(vb);
        own = 2;
        break;
      case Op::Min:
      case Op::Max:
        // A selection: |min(a + da, b + db) - min(a, b)| <= max(|da|, |db|); nothing rounds.
        r = op == Op::Min ? std::fmin(va, vb) : std::fmax(va, vb);
        m = std::fmax(ma, mb);
        e = std::fmax(ea, eb);
        own = 0;
        break;
      default:
        throw std::logic_error("Elementwise: not a binary op: " + std::string(OpName(op)));
    }
    KeepAtLeastAbs(r, &m);
    y.value[i] = r;
    y.mag[i] = m;
    // x / c may be computed as x * (1/c): the reciprocal is an intermediate too.
    y.peak[i] = Peak(std::fmax(a.peak[static_cast<size_t>(ia)], b.peak[static_cast<size_t>(ib)]), r,
                     op == Op::Div ? 1.0 / vb : 0.0);
    y.sigma[i] = Quadrature(e, own * kU * std::fabs(r) + folded);
    for (size_t d = rank; d-- > 0;) {  // advance the output multi-index
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

RefTensor RunBinary(const Node& n, const Inputs& in) {
  const BinaryOperands ops = GetBinaryOperands(n);
  RefTensor const_a, const_b;
  if (ops.const_a) const_a = FromFloat(*ops.const_a);
  if (ops.const_b) const_b = FromFloat(*ops.const_b);
  const RefTensor& a = ops.const_a ? const_a : *in.at(static_cast<size_t>(ops.input_a));
  const RefTensor& b = ops.const_b ? const_b : *in.at(static_cast<size_t>(ops.input_b));
  return Elementwise(n.op, a, b);
}

}  // namespace fusefuzz::ref
