// The decomposed normalizations and activations, written as exporters write them (PyTorch's
// ONNX export, tf2onnx, Keras, HuggingFace models): the patterns real engines recover by pattern
// matching (ONNX Runtime's LayerNormFusion, SimplifiedLayerNormFusion, GeluFusion,
// FastGeluFusion, QuickGeluFusion, ...). docs/generator.md lists the variants and why.
#include <algorithm>

#include "generators/gen_patterns.h"

namespace fusefuzz::gen {
namespace {

Tensor Scalar(double v) { return Tensor(Shape{1}, std::vector<float>{static_cast<float>(v)}); }

// x op c with the scalar constant c on the right (`left`: on the left, c op x).
std::string WithConst(Builder& b, Op op, const std::string& x, double c, bool left = false) {
  ParamMap p;
  p[left ? "A" : "B"] = Scalar(c);
  return b.AddNode(op, {x}, {}, std::move(p));
}

// x op y, the operands in either order for a commutative op (exporters write both).
std::string Commuted(Builder& b, Op op, const std::string& x, const std::string& y) {
  return b.src().Bool(b.cfg().probabilities.swap_operands) ? b.AddNode(op, {y, x})
                                                           : b.AddNode(op, {x, y});
}

// x * x: as Pow(x, 2) or Mul(x, x), the two forms exporters write for a square.
std::string Square(Builder& b, const std::string& x) {
  if (b.src().Bool(0.5)) return b.AddNode(Op::Mul, {x, x});
  return b.AddNode(Op::Pow, {x}, {{"exponent", 2.0}});
}

// n / s as Div, or as Mul by Reciprocal(s) (one node more; only when `room`).
std::string Normalize(Builder& b, const std::string& n, const std::string& s, bool room) {
  if (room && b.src().Bool(0.3)) return b.AddNode(Op::Mul, {n, b.AddNode(Op::Reciprocal, {s})});
  return b.AddNode(Op::Div, {n, s});
}

// The axes a decomposed norm reduces: the last dim (a transformer's hidden size) mostly, written
// as -1 or 3; or the last two or three dims.
std::vector<int64_t> NormAxes(Builder& b) {
  static const std::vector<int64_t> kAxes[] = {{-1}, {3}, {-2, -1}, {2, 3}, {1, 2, 3}};
  const double w[] = {5, 1, 1, 0.5, 0.5};
  return kAxes[b.src().Pick(w)];
}

// gamma (or beta) for a norm over `axes` of x: [W]-like trailing shape, its rank-4 form, a
// scalar, sometimes a graph input instead of a constant.
std::string Affine(Builder& b, Op op, const std::string& y, const Shape& x,
                   const std::vector<int64_t>& axes, double lo, double hi) {
  Shape trailing;
  const size_t first = axes.size() == 1 ? 3 : 4 - axes.size();
  for (size_t d = first; d < 4; ++d) trailing.push_back(x[d]);
  Shape s = trailing;
  const double w[] = {4, 1, 1, 1};
  switch (b.src().Pick(w)) {
    case 1:  // the same, rank 4 ([1, 1, 1, W])
      s.insert(s.begin(), 4 - s.size(), 1);
      break;
    case 2:
      s = {1};
      break;
    case 3: {
      // An operand that is a graph input, not a constant: no fold may assume its values. Rank 4
      // ([1, 1, 1, W]), since a later step may pick any value as its input.
      s.insert(s.begin(), 4 - s.size(), 1);
      return Commuted(b, op, y, b.AddInput(s));
    }
    default:
      break;
  }
  ParamMap p;
  const bool left = b.src().Bool(b.cfg().probabilities.swap_operands);
  p[left ? "A" : "B"] = b.UniformTensor(s, lo, hi);
  return b.AddNode(op, {y}, {}, std::move(p));
}

double PickEps(Builder& b) {
  const double kEps[] = {1e-5, 1e-6, 1e-12, 1e-3};
  const double w[] = {4, 2, 1, 1};
  return kEps[b.src().Pick(w)];
}

// sqrt(v + eps), eps on either side of the Add; sometimes (x / (sqrt(v) + eps), as Keras-era
// exporters wrote it) after the Sqrt, which a LayerNorm fusion must not take for its own.
std::string Denominator(Builder& b, const std::string& v) {
  const double eps = PickEps(b);
  const bool left = b.src().Bool(b.cfg().probabilities.swap_operands);
  if (b.src().Bool(0.1)) return WithConst(b, Op::Add, b.AddNode(Op::Sqrt, {v}), eps, left);
  return b.AddNode(Op::Sqrt, {WithConst(b, Op::Add, v, eps, left)});
}

// LayerNorm: (x - mean) / sqrt(mean((x - mean)^2) + eps) * gamma + beta; 7..10 nodes (the
// Reciprocal form only with a tenth node to spare).
std::string LayerNormDecomposed(Builder& b, const std::string& x, int64_t budget) {
  const int64_t end = b.node_count() + budget;
  const std::vector<int64_t> axes = NormAxes(b);
  const AttrMap reduce = {{"axes", axes}, {"keepdims", int64_t{1}}};
  const std::string mean = b.AddNode(Op::ReduceMean, {x}, reduce);
  const std::string d = b.AddNode(Op::Sub, {x, mean});
  const std::string var = b.AddNode(Op::ReduceMean, {Square(b, d)}, reduce);
  const std::string s = Denominator(b, var);
  std::string y = Normalize(b, d, s, end - b.node_count() >= 4);
  // gamma and beta (ONNX Runtime's LayerNormFusion wants both); 1 in 8 a LayerNorm without
  // them (elementwise_affine=False).
  if (b.src().Bool(0.875)) {
    y = Affine(b, Op::Mul, y, b.ShapeOf(x), axes, -1.5, 1.5);
    y = Affine(b, Op::Add, y, b.ShapeOf(x), axes, -1, 1);
  }
  return y;
}

// RMSNorm (ONNX Runtime's SimplifiedLayerNormalization): x / sqrt(mean(x^2) + eps) * gamma.
std::string RmsNormDecomposed(Builder& b, const std::string& x, int64_t budget) {
  const int64_t end = b.node_count() + budget;
  const std::vector<int64_t> axes = NormAxes(b);
  const AttrMap reduce = {{"axes", axes}, {"keepdims", int64_t{1}}};
  const std::string ms = b.AddNode(Op::ReduceMean, {Square(b, x)}, reduce);
  std::string y = Normalize(b, x, Denominator(b, ms), end - b.node_count() >= 4);
  if (end - b.node_count() >= 1) y = Affine(b, Op::Mul, y, b.ShapeOf(x), axes, -1.5, 1.5);
  return y;
}

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrtHalf = 0.7071067811865476;
constexpr double kSqrt2OverPi = 0.7978845608028654;

// GELU, erf form: 0.5 * x * (1 + erf(x / sqrt2)) in the orders exporters write:
// (x * 0.5) * (1 + erf(..)), x * ((1 + erf(..)) * 0.5), (x * (1 + erf(..))) * 0.5; x / sqrt2 as
// Div or as Mul by 1/sqrt2.
std::string GeluErfDecomposed(Builder& b, const std::string& x) {
  const std::string scaled =
      b.src().Bool(0.7) ? WithConst(b, Op::Div, x, kSqrt2) : WithConst(b, Op::Mul, x, kSqrtHalf);
  const bool left = b.src().Bool(b.cfg().probabilities.swap_operands);
  const std::string one_plus = WithConst(b, Op::Add, b.AddNode(Op::Erf, {scaled}), 1.0, left);
  const double order[] = {2, 1, 2};
  switch (b.src().Pick(order)) {
    case 0:
      return Commuted(b, Op::Mul, WithConst(b, Op::Mul, x, 0.5), one_plus);
    case 1:
      return Commuted(b, Op::Mul, x, WithConst(b, Op::Mul, one_plus, 0.5));
    default:
      return WithConst(b, Op::Mul, Commuted(b, Op::Mul, x, one_plus), 0.5);
  }
}

// GELU, tanh form (FastGelu): 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), the cube as
// Pow(x, 3) or x*x*x; 8..9 nodes.
std::string GeluTanhDecomposed(Builder& b, const std::string& x, int64_t budget) {
  const std::string cube = budget >= 9 && b.src().Bool(0.4)
                               ? b.AddNode(Op::Mul, {b.AddNode(Op::Mul, {x, x}), x})
                               : b.AddNode(Op::Pow, {x}, {{"exponent", 3.0}});
  const std::string inner = Commuted(b, Op::Add, x, WithConst(b, Op::Mul, cube, 0.044715));
  const std::string t = b.AddNode(Op::Tanh, {WithConst(b, Op::Mul, inner, kSqrt2OverPi)});
  const std::string one_plus = WithConst(b, Op::Add, t, 1.0, b.src().Bool(0.5));
  if (b.src().Bool(0.5)) return Commuted(b, Op::Mul, WithConst(b, Op::Mul, x, 0.5), one_plus);
  return WithConst(b, Op::Mul, Commuted(b, Op::Mul, x, one_plus), 0.5);
}

// QuickGelu (CLIP): x * sigmoid(1.702 x).
std::string QuickGeluDecomposed(Builder& b, const std::string& x) {
  const double alpha = b.src().Bool(0.8) ? 1.702 : 1.0 + b.Float(0, 1);
  const std::string s =
      b.AddNode(Op::Sigmoid, {WithConst(b, Op::Mul, x, alpha, b.src().Bool(0.5))});
  return Commuted(b, Op::Mul, x, s);
}

// SiLU / Swish: x * sigmoid(x), or with the sigmoid itself written out as 1 / (1 + exp(-x))
// (Reciprocal, or Div with a constant numerator).
std::string SiluDecomposed(Builder& b, const std::string& x, int64_t budget) {
  std::string s;
  if (budget >= 5 && b.src().Bool(0.3)) {
    const std::string one_plus =
        WithConst(b, Op::Add, b.AddNode(Op::Exp, {WithConst(b, Op::Mul, x, -1.0)}), 1.0);
    s = b.src().Bool(0.5) ? b.AddNode(Op::Reciprocal, {one_plus})
                          : WithConst(b, Op::Div, one_plus, 1.0, true);
  } else {
    s = b.AddNode(Op::Sigmoid, {x});
  }
  return Commuted(b, Op::Mul, x, s);
}

// HardSwish: x * HardSigmoid(x) (alpha 1/6, beta 0.5), or x * clip(x + 3, 0, 6) / 6 as
// PyTorch's and Keras's exports write it.
std::string HardSwishDecomposed(Builder& b, const std::string& x, int64_t budget) {
  if (budget >= 4 && b.src().Bool(0.5)) {
    const std::string r6 =
        b.AddNode(Op::Clip, {WithConst(b, Op::Add, x, 3.0)}, {{"min", 0.0}, {"max", 6.0}});
    const std::string p = Commuted(b, Op::Mul, x, r6);
    return b.src().Bool(0.5) ? WithConst(b, Op::Div, p, 6.0) : WithConst(b, Op::Mul, p, 1.0 / 6);
  }
  const std::string h =
      b.AddNode(Op::HardSigmoid, {x},
                {{"alpha", static_cast<double>(static_cast<float>(1.0 / 6))}, {"beta", 0.5}});
  return Commuted(b, Op::Mul, x, h);
}

// Mish: x * tanh(softplus(x)), softplus as log(1 + exp(x)).
std::string MishDecomposed(Builder& b, const std::string& x) {
  const std::string one_plus =
      WithConst(b, Op::Add, b.AddNode(Op::Exp, {x}), 1.0, b.src().Bool(0.5));
  return Commuted(b, Op::Mul, x, b.AddNode(Op::Tanh, {b.AddNode(Op::Log, {one_plus})}));
}

// Softmax over the last dim as exporters write it: e = exp(x - ReduceMax(x)) (or exp(x) alone),
// e / ReduceSum(e) (or e * Reciprocal(sum)); the engines' SoftmaxFusion-style recognizers and the
// fused Softmax kernels aim at it.
std::string SoftmaxDecomposed(Builder& b, const std::string& x, int64_t budget) {
  const AttrMap reduce = {{"axes", std::vector<int64_t>{b.src().Bool(0.7) ? -1 : 3}},
                          {"keepdims", int64_t{1}}};
  std::string shifted = x;
  if (budget >= 5 && b.src().Bool(0.7)) {
    shifted = b.AddNode(Op::Sub, {x, b.AddNode(Op::ReduceMax, {x}, reduce)});
  }
  const std::string e = b.AddNode(Op::Exp, {shifted});
  const std::string sum = b.AddNode(Op::ReduceSum, {e}, reduce);
  const int64_t used = shifted == x ? 2 : 4;
  return Normalize(b, e, sum, budget - used >= 2);
}

// The attention-style chain over the last two dims of an [N, C, H, W] value: [Transpose(H, W)]
// -> [Mul by a scalar] -> MatMul by a constant [W', K] -> [Add a bias] -> [Softmax on the last
// dim]. ORT's MatmulTransposeFusion, MatMulScaleFusion, MatMulAddFusion and the Softmax after a
// MatMul of attention; each optional step only when the budget has room.
std::string MatMulChain(Builder& b, const std::string& x, int64_t budget) {
  int64_t spare = budget - 1;
  auto take = [&spare, &b](Op op, double p) {
    if (spare <= 0 || !b.Allowed(op) || !b.src().Bool(p)) return false;
    --spare;
    return true;
  };
  std::string v = x;
  if (take(Op::Transpose, 0.5)) {
    v = b.AddNode(Op::Transpose, {v}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  }
  if (take(Op::Mul, 0.4)) {
    const double kScale[] = {0.125, 0.5, 2.0, 0.35355339};
    v = WithConst(b, Op::Mul, v, kScale[b.src().Int(0, 3)], b.src().Bool(0.5));
  }
  const int64_t k = b.ShapeOf(v)[3];
  const int64_t n = b.src().Int(1, b.cfg().limits.max_channels);
  v = b.AddNode(Op::MatMul, {v}, {}, {{"B", b.ConvWeights({k, n}, k)}});
  if (take(Op::Add, 0.5)) {
    ParamMap p;
    p["B"] = b.UniformTensor(b.src().Bool(0.8) ? Shape{n} : Shape{1}, -1.0, 1.0);
    v = b.AddNode(Op::Add, {v}, {}, std::move(p));
  }
  if (take(Op::Softmax, 0.4)) v = b.AddNode(Op::Softmax, {v}, {{"axis", int64_t{-1}}});
  return v;
}

}  // namespace

bool DecomposedEligible(Builder& b, Pattern p) {
  auto ok = [&](std::initializer_list<Op> ops) {
    for (Op op : ops)
      if (!b.Allowed(op)) return false;
    return true;
  };
  switch (p) {
    case Pattern::kLayerNormDecomposed:
      return ok(
          {Op::ReduceMean, Op::Sub, Op::Mul, Op::Pow, Op::Add, Op::Sqrt, Op::Div, Op::Reciprocal});
    case Pattern::kRmsNormDecomposed:
      return ok({Op::ReduceMean, Op::Mul, Op::Pow, Op::Add, Op::Sqrt, Op::Div, Op::Reciprocal});
    case Pattern::kGeluErfDecomposed:
      return ok({Op::Div, Op::Mul, Op::Erf, Op::Add});
    case Pattern::kGeluTanhDecomposed:
      return ok({Op::Pow, Op::Mul, Op::Add, Op::Tanh});
    case Pattern::kQuickGeluDecomposed:
      return ok({Op::Mul, Op::Sigmoid});
    case Pattern::kSiluDecomposed:
      return ok({Op::Mul, Op::Sigmoid, Op::Exp, Op::Add, Op::Reciprocal, Op::Div});
    case Pattern::kHardSwishDecomposed:
      return ok({Op::Mul, Op::HardSigmoid, Op::Add, Op::Clip, Op::Div});
    case Pattern::kMishDecomposed:
      return ok({Op::Exp, Op::Add, Op::Log, Op::Tanh, Op::Mul});
    case Pattern::kSoftmaxDecomposed:
      return ok({Op::ReduceMax, Op::Sub, Op::Exp, Op::ReduceSum, Op::Div, Op::Mul, Op::Reciprocal});
    case Pattern::kMatMulChain:
      // MatMul at rank 4: only for targets that also take Transpose (the attention vocabulary).
      return ok({Op::MatMul, Op::Transpose});
    default:
      return false;
  }
}

std::string EmitDecomposed(Builder& b, Pattern p, const std::string& x, int64_t budget) {
  switch (p) {
    case Pattern::kLayerNormDecomposed:
      return LayerNormDecomposed(b, x, budget);
    case Pattern::kRmsNormDecomposed:
      return RmsNormDecomposed(b, x, budget);
    case Pattern::kGeluErfDecomposed:
      return GeluErfDecomposed(b, x);
    case Pattern::kGeluTanhDecomposed:
      return GeluTanhDecomposed(b, x, budget);
    case Pattern::kQuickGeluDecomposed:
      return QuickGeluDecomposed(b, x);
    case Pattern::kSiluDecomposed:
      return SiluDecomposed(b, x, budget);
    case Pattern::kHardSwishDecomposed:
      return HardSwishDecomposed(b, x, budget);
    case Pattern::kMishDecomposed:
      return MishDecomposed(b, x);
    case Pattern::kSoftmaxDecomposed:
      return SoftmaxDecomposed(b, x, budget);
    case Pattern::kMatMulChain:
      return MatMulChain(b, x, budget);
    default:
      break;
  }
  throw std::logic_error("EmitDecomposed: not a decomposed pattern");
}

}  // namespace fusefuzz::gen
