// Fast float32 ReduceMean and unary math ops (Pow with a constant exponent, Sqrt, Reciprocal,
// Exp, Log, Erf): plain loops over libm's float functions, compiled once (no ISA copies: none of
// the embedded optimizer's rules rewrites them, and they are memory-bound).
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

}  // namespace

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
      break;
  }
  throw InputError("node '" + n.name + "'", "not a math op");
}

void ReduceOp(const Node& n, const Tensor& x, Tensor& y) {
  const size_t rank = x.shape.size();
  const std::vector<bool> reduced = ReduceMask(n, rank);
  Shape kept = x.shape;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  // Sums in float32 in row-major order of the input (an engine's plain loop), then one division.
  std::fill(y.data.begin(), y.data.end(), 0.0f);
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < x.data.size(); ++i) {
    size_t o = 0;
    for (size_t d = 0; d < rank; ++d) {
      o = o * static_cast<size_t>(kept[d]) + static_cast<size_t>(reduced[d] ? 0 : idx[d]);
    }
    y.data[o] += x.data[i];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  const float count = static_cast<float>(x.data.size() / y.data.size());
  for (float& v : y.data) v /= count;
}

}  // namespace fusefuzz::fast
