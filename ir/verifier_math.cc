// Shape inference of the reduce and unary-math families (ReduceMean; Pow, Sqrt, Reciprocal, Exp,
// Log, Erf).
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ir/verifier.h"
#include "ir/verifier_internal.h"

namespace fusefuzz {
namespace {

[[noreturn]] void FailAt(const Node& n, const std::string& what) {
  throw InputError("node '" + n.name + "' (" + std::string(OpName(n.op)) + ")", what);
}

}  // namespace

std::vector<bool> ReduceMask(const Node& n, size_t rank) {
  std::vector<bool> mask(rank, false);
  const std::vector<int64_t> axes = AttrInts(n, "axes");
  if (axes.empty()) FailAt(n, "attribute 'axes' must name at least one dim");
  const int64_t r = static_cast<int64_t>(rank);
  for (int64_t a : axes) {
    if (a < -r || a >= r) {
      FailAt(n, "axis " + std::to_string(a) + " out of range [-" + std::to_string(r) + ", " +
                    std::to_string(r) + ")");
    }
    const size_t d = static_cast<size_t>(a < 0 ? a + r : a);
    if (mask[d]) FailAt(n, "axis " + std::to_string(a) + " is listed twice");
    mask[d] = true;
  }
  return mask;
}

int64_t SoftmaxAxis(const Node& n, size_t rank) {
  const int64_t a = AttrInt(n, "axis"), r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) {
    FailAt(n, "axis " + std::to_string(a) + " out of range [-" + std::to_string(r) + ", " +
                  std::to_string(r) + ")");
  }
  return a < 0 ? a + r : a;
}

std::vector<int64_t> TransposePerm(const Node& n, size_t rank) {
  const std::vector<int64_t> perm = AttrInts(n, "perm");
  if (perm.size() != rank) {
    FailAt(n, "perm has " + std::to_string(perm.size()) + " entries for an input of rank " +
                  std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      FailAt(n, "perm must be a permutation of 0.." + std::to_string(rank - 1) + ", got " +
                    ShapeToString(perm));
    }
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

Shape TransposeShape(const Node& n, const std::vector<Shape>& in) {
  const std::vector<int64_t> perm = TransposePerm(n, in[0].size());
  Shape out;
  for (int64_t p : perm) out.push_back(in[0][static_cast<size_t>(p)]);
  return out;
}

Shape ReduceShape(const Node& n, const std::vector<Shape>& in) {
  const Shape& x = in[0];
  if (n.op == Op::Softmax) {
    SoftmaxAxis(n, x.size());
    return x;
  }
  const std::vector<bool> mask = ReduceMask(n, x.size());
  const int64_t keepdims = AttrInt(n, "keepdims");
  if (keepdims != 0 && keepdims != 1) {
    FailAt(n, "keepdims must be 0 or 1, got " + std::to_string(keepdims));
  }
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!mask[d]) {
      out.push_back(x[d]);
    } else if (keepdims == 1) {
      out.push_back(1);
    }
  }
  // ONNX gives a scalar when every dim is dropped; graphs have no rank-0 values, so keep [1].
  if (out.empty()) FailAt(n, "keepdims 0 over every dim would give a rank-0 value");
  return out;
}

bool IsSupportedExponent(double e) { return e == 0.5 || e == 1.0 || e == 2.0 || e == 3.0; }

Shape MathShape(const Node& n, const std::vector<Shape>& in) {
  switch (n.op) {
    case Op::Pow: {
      const double e = AttrFloat(n, "exponent");
      if (!IsSupportedExponent(e)) {
        FailAt(n, "exponent must be 0.5, 1, 2 or 3, got " + std::to_string(e));
      }
      break;
    }
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
      break;
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
      throw std::logic_error("MathShape: not a math op: " + std::string(OpName(n.op)));
  }
  return in[0];
}

}  // namespace fusefuzz
