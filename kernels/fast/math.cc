// Fast float32 ReduceMean, ReduceSum, ReduceMax, Softmax, Transpose and unary math ops (Pow with a
// constant exponent, Sqrt, Reciprocal, Exp, Log, Erf): plain loops over libm's float functions,
// compiled once (no ISA copies: none of the embedded optimizer's rules rewrites them, and they are
// memory-bound).
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast {
namespace {

// One element of a math op in float32, as an exporter's ONNX graph computes it.
template <Op kOp>
void Map(const Tensor& x, Tensor& y) {
  for (size_t i = 0; i < x.data.size(); ++i) {
    const float v = x.data[i];
    if constexpr (kOp == Op::Sqrt) y.data[i] = std::sqrt(v);
    if constexpr (kOp == Op::Reciprocal) y.data[i] = 1.0f / v;
    if constexpr (kOp == Op::Exp) y.data[i] = std::exp(v);
    if constexpr (kOp == Op::Log) y.data[i] = std::log(v);
    if constexpr (kOp == Op::Erf) y.data[i] = std::erf(v);
  }
}

void PowOp(const Node& n, const Tensor& x, Tensor& y) {
  const double e = AttrFloat(n, "exponent");
  for (size_t i = 0; i < x.data.size(); ++i) {
    const float v = x.data[i];
    // The forms engines use for the exporters' constant exponents: x*x, x*x*x, sqrt.
    y.data[i] = e == 2.0 ? v * v : e == 3.0 ? v * v * v : e == 0.5 ? std::sqrt(v) : v;
  }
}

// Softmax along one axis in float32: max, exp(x - max), their sum, one division each.
void SoftmaxOp(const Node& n, const Tensor& x, Tensor& y) {
  const size_t axis = static_cast<size_t>(SoftmaxAxis(n, x.shape.size()));
  const int64_t len = x.shape[axis];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t outer = static_cast<int64_t>(x.data.size()) / (len * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * len + k) * inner + in); };
      float max = -INFINITY;
      for (int64_t k = 0; k < len; ++k) max = std::max(max, x.data[at(k)]);
      float sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        y.data[at(k)] = std::exp(x.data[at(k)] - max);
        sum += y.data[at(k)];
      }
      for (int64_t k = 0; k < len; ++k) y.data[at(k)] /= sum;
    }
  }
}

}  // namespace

void TransposeOp(const Node& n, const Tensor& x, Tensor& y) {
  const std::vector<int64_t> perm = TransposePerm(n, x.shape.size());
  const size_t rank = x.shape.size();
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) in_stride[d] = in_stride[d + 1] * x.shape[d + 1];
  std::vector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < y.data.size(); ++o) {
    int64_t i = 0;
    for (size_t d = 0; d < rank; ++d) i += idx[d] * in_stride[static_cast<size_t>(perm[d])];
    y.data[o] = x.data[static_cast<size_t>(i)];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < y.shape[d]) break;
      idx[d] = 0;
    }
  }
}

void MathOp(const Node& n, const Tensor& x, Tensor& y) {
  switch (n.op) {
    case Op::Pow:
      return PowOp(n, x, y);
    case Op::Sqrt:
      return Map<Op::Sqrt>(x, y);
    case Op::Reciprocal:
      return Map<Op::Reciprocal>(x, y);
    case Op::Exp:
      return Map<Op::Exp>(x, y);
    case Op::Log:
      return Map<Op::Log>(x, y);
    case Op::Erf:
      return Map<Op::Erf>(x, y);
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Gemm:
    case Op::MatMul:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
    case Op::ReduceMean:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      break;
  }
  throw InputError("node '" + n.name + "'", "not a math op");
}

void ReduceOp(const Node& n, const Tensor& x, Tensor& y) {
  if (n.op == Op::Softmax) return SoftmaxOp(n, x, y);
  const size_t rank = x.shape.size();
  const std::vector<bool> reduced = ReduceMask(n, rank);
  Shape kept = x.shape;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  // Sums in float32 in row-major order of the input (an engine's plain loop), then one division
  // (ReduceMean); ReduceMax selects.
  const bool is_max = n.op == Op::ReduceMax;
  std::fill(y.data.begin(), y.data.end(), is_max ? -INFINITY : 0.0f);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < x.data.size(); ++i) {
    size_t o = 0;
    for (size_t d = 0; d < rank; ++d) {
      o = o * static_cast<size_t>(kept[d]) + static_cast<size_t>(reduced[d] ? 0 : idx[d]);
    }
    y.data[o] = is_max ? std::max(y.data[o], x.data[i]) : y.data[o] + x.data[i];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  if (n.op != Op::ReduceMean) return;
  const float count = static_cast<float>(x.data.size() / y.data.size());
  for (float& v : y.data) v /= count;
}

}  // namespace fusefuzz::fast
