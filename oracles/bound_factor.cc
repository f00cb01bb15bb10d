// The bound oracle's factor k: a running count, along the worst path from the graph inputs, of
// the rounding error each stage may add, in units of u * magnitude. docs/oracle.md derives it.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ir/verifier.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

// Safety factor over the per-stage estimates, and a floor for the final rounding to float32
// and libm/vectorized transcendental error (a few ulps of the result).
constexpr double kSafety = 2.0;
constexpr double kBase = 4.0;

// Error of a float32 sum of n terms, in units of u * sum|terms|: sqrt(n) is the practical growth
// of round-to-nearest errors (the worst case is n, reached only by adversarial data); +2 covers
// short sums where constant terms dominate.
double Reduction(int64_t n) { return std::sqrt(static_cast<double>(std::max<int64_t>(n, 1))) + 2; }

// The activation's rounding class is a column of ir/ops.def, so a new activation must say which
// class it is in (a transcendental op given the piecewise-linear cost would make the bound too
// tight).
double ActivationCost(Op act) {
  switch (RoundingClassOf(act)) {
    case RoundingClass::kTranscendental:
      return 4;  // exp/tanh/erf: a few ulps from vectorized approximations
    case RoundingClass::kPiecewiseLinear:
      return 2;  // piecewise linear (HardSwish: x * piecewise linear): one or two roundings
    case RoundingClass::kNotActivation:
      break;  // not activations: StageCost handles them
  }
  throw std::logic_error("ActivationCost: not an activation: " + std::string(OpName(act)));
}

double StageCost(const Node& n, const ShapeMap& shapes) {
  const Shape& x = shapes.at(n.inputs[0]);
  switch (n.op) {
    case Op::Conv:
    case Op::FusedConv: {
      const Shape& w = n.params.at("W").shape;
      // Dot product of C/group*kH*kW terms, + bias add, + folding (weights and bias rounded
      // once more when a BN or scale is folded in).
      double cost = Reduction(w[1] * w[2] * w[3]) + 3;
      for (const auto& st : n.epilogue) {
        cost += st.kind == EpilogueKind::kActivation ? ActivationCost(st.act) : 2;
      }
      return cost;
    }
    case Op::Gemm: {
      // As a conv: a dot product of K terms, + alpha scaling, + beta*C and its add (+3, which
      // also covers BN weights folded in), + each epilogue activation.
      const GemmDims d = GetGemmDims(n, x);
      double cost = Reduction(d.k) + 3;
      for (const auto& st : n.epilogue) {
        cost += st.kind == EpilogueKind::kActivation ? ActivationCost(st.act) : 2;
      }
      return cost;
    }
    case Op::MatMul:
      return Reduction(n.params.at("B").shape[0]);  // a dot product of K terms
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
      // Quantized outputs are judged on the integer grid (oracles/grid); the float cost of a
      // dequantized value is its one multiply.
      return 1;
    case Op::BatchNorm:
      return 3;  // scale = gamma/sqrt(var+eps) and shift computed in float, then x*scale+shift
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm: {
      int64_t group = 1;
      if (n.op == Op::LayerNorm) {
        int64_t axis = AttrInt(n, "axis");
        if (axis < 0) axis += static_cast<int64_t>(x.size());
        for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) group *= x[d];
      } else {
        group = x[2] * x[3];
        if (n.op == Op::GroupNorm) group *= x[1] / std::max<int64_t>(1, AttrInt(n, "num_groups"));
      }
      // Mean and variance are two reductions; then rsqrt, the centring and scale/shift.
      return 2 * Reduction(group) + 4;
    }
    case Op::AvgPool: {
      PoolAttrs a = GetPoolAttrs(n);
      return Reduction(a.kernel_h * a.kernel_w) + 1;
    }
    case Op::GlobalAvgPool:
      return Reduction(x[2] * x[3]) + 1;
    case Op::ReduceMean: {
      // As GlobalAvgPool: a sum over the reduced dims, then the division.
      const std::vector<bool> reduced = ReduceMask(n, x.size());
      int64_t count = 1;
      for (size_t d = 0; d < x.size(); ++d)
        if (reduced[d]) count *= x[d];
      return Reduction(count) + 1;
    }
    case Op::ReduceSum: {
      const std::vector<bool> reduced = ReduceMask(n, x.size());
      int64_t count = 1;
      for (size_t d = 0; d < x.size(); ++d)
        if (reduced[d]) count *= x[d];
      return Reduction(count);  // a sum, no division
    }
    case Op::Softmax:
      // exp(x - M) (the subtraction's rounding is in the magnitude's |x - M| term, the exp a few
      // ulps), the sum of n positive terms, one division (docs/oracle.md, "Softmax").
      return Reduction(x[static_cast<size_t>(SoftmaxAxis(n, x.size()))]) + 4 + 1;
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
      // x*x*x rounds twice; sqrt and 1/x once, or twice from an approximation refined by a
      // Newton step (rsqrt/rcp); the magnitude's Lipschitz terms carry the input's error.
      return 2;
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
      return 4;  // as the transcendental activations: a few ulps from vectorized approximations
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
      return 1;
    case Op::Div:
      return 2;  // x / c may become x * (1/c): one more rounding
    case Op::Pad:
    case Op::MaxPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Transpose:
    case Op::Min:
    case Op::Max:
    case Op::ReduceMax:
      return 0;  // exact data movement or selection
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
      return ActivationCost(n.op);
  }
  return 0;
}

}  // namespace

std::map<std::string, double> DeriveBoundFactors(const Graph& g) {
  ShapeMap shapes = VerifyGraph(g);
  std::map<std::string, double> path;  // accumulated stage costs, before safety factor
  for (const auto& in : g.inputs) path[in.name] = 0;
  for (const auto& n : g.nodes) {
    double in_cost = 0;
    for (const auto& i : n.inputs) in_cost = std::max(in_cost, path.at(i));
    path[n.output] = in_cost + StageCost(n, shapes);
  }
  std::map<std::string, double> k;
  for (const auto& [v, c] : path) k[v] = kSafety * (kBase + c);
  return k;
}

double DeriveBoundFactor(const Graph& g, const std::string& output) {
  return DeriveBoundFactors(g).at(output);
}

}  // namespace fusefuzz
