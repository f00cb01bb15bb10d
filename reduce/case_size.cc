// The total order that every accepted reduction must decrease (see CaseSize), and the value
// simplification ladder shared by the param and input value passes.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <variant>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

int64_t NodeGeometry(const Node& n) {
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv: {
      ConvAttrs a = GetConvAttrs(n);
      int64_t s = (a.stride_h - 1) + (a.stride_w - 1) + (a.dilation_h - 1) + (a.dilation_w - 1) +
                  a.pad_top + a.pad_left + a.pad_bottom + a.pad_right + (a.group - 1);
      auto w = n.params.find("W");
      if (w != n.params.end() && w->second.shape.size() == 4) {
        s += (w->second.shape[2] - 1) + (w->second.shape[3] - 1);
      }
      return s;
    }
    case OpFamily::kPool: {
      if (n.op == Op::GlobalAvgPool) return 0;
      PoolAttrs a = GetPoolAttrs(n);
      return (a.kernel_h - 1) + (a.kernel_w - 1) + (a.stride_h - 1) + (a.stride_w - 1) + a.pad_top +
             a.pad_left + a.pad_bottom + a.pad_right + (a.dilation_h - 1) + (a.dilation_w - 1) +
             (a.ceil_mode ? 1 : 0) + (a.count_include_pad ? 1 : 0);
    }
    case OpFamily::kPad: {
      int64_t s = 0;
      for (int64_t p : AttrInts(n, "pads")) s += p;
      return s + (AttrString(n, "mode") != "constant" ? 1 : 0) +
             (AttrFloat(n, "value") != 0 ? 1 : 0);
    }
    case OpFamily::kGemm:
      // Transposes and a non-unit alpha/beta are complications a smaller case can drop.
      return n.op == Op::Gemm
                 ? AttrInt(n, "transA") + AttrInt(n, "transB") +
                       (AttrFloat(n, "alpha") != 1 ? 1 : 0) + (AttrFloat(n, "beta") != 1 ? 1 : 0)
                 : 0;
    case OpFamily::kNorm:
      return n.op == Op::GroupNorm ? AttrInt(n, "num_groups") - 1 : 0;
    case OpFamily::kActivation:
    case OpFamily::kBinary:
    case OpFamily::kConcat:
    case OpFamily::kIdentity:
    case OpFamily::kReshape:
    case OpFamily::kQuant:
    case OpFamily::kReduce:
    case OpFamily::kMath:
    case OpFamily::kLayout:
      return 0;  // no geometry: their size is in their params and values
  }
  return 0;
}

int64_t StepRank(const EpilogueStep& step) {
  switch (step.kind) {
    case EpilogueKind::kActivation:
      return ActivationRank(step.act);
    case EpilogueKind::kClamp:
      return 1;
    case EpilogueKind::kScaleShift:
    case EpilogueKind::kAdd:
      return 3;
  }
  return 3;
}

void AddTensor(const Tensor& t, CaseSize& s) {
  s.elements += t.size();
  for (float v : t.data) s.value_cost += ValueCost(v);
}

}  // namespace

int64_t ActivationRank(Op op) {
  // A ladder, not a classification: every op not named is "any other".
  if (op == Op::Relu) return 0;
  if (op == Op::Clip) return 1;
  if (op == Op::Relu6) return 2;
  return 3;
}

int64_t OpCost(const Node& n) {
  int64_t cost = IsActivation(n.op) ? ActivationRank(n.op) : 0;
  // A quantized compute op is more than the QuantizeLinear of its values (pass quant-cut).
  if (n.op == Op::QLinearConv || n.op == Op::QLinearAdd) cost += 1;
  for (const EpilogueStep& step : n.epilogue) cost += 4 + StepRank(step);
  return cost;
}

CaseSize SizeOf(const ReduceCase& c) {
  CaseSize s;
  s.nodes = static_cast<int64_t>(c.graph.nodes.size());
  s.outputs = static_cast<int64_t>(c.graph.outputs.size());
  for (const Node& n : c.graph.nodes) {
    s.ops += OpCost(n);
    s.spellings += n.spelling.empty() ? 0 : 1;
    s.geometry += NodeGeometry(n);
    for (const auto& [name, v] : n.attrs) {
      if (const double* d = std::get_if<double>(&v))
        s.value_cost += ValueCost(static_cast<float>(*d));
    }
    for (const auto& [name, t] : n.params) AddTensor(t, s);
    // Quantization parameters (pass quant-params): per axis costs its extra channels, a zero
    // point other than 0 or qmin one more than qmin, each scale its ValueCost.
    for (const auto& [role, q] : n.quant) {
      s.value_cost += q.PerAxis() ? 1 : 0;
      for (double sc : q.scale) s.value_cost += ValueCost(static_cast<float>(sc));
      for (int64_t z : q.zero_point) s.value_cost += z == 0 ? 0 : z == q.qmin() ? 1 : 2;
    }
    for (const auto& step : n.epilogue) {
      for (const auto& [name, t] : step.params) AddTensor(t, s);
    }
  }
  for (const auto& [name, t] : c.inputs) AddTensor(t, s);
  return s;
}

int64_t ValueCost(float v) {
  if (!std::isfinite(v)) return 64;
  if (v == 0) return std::signbit(v) ? 1 : 0;
  int e = 0;
  double f = std::frexp(std::fabs(static_cast<double>(v)), &e);  // |v| = f * 2^e, f in [0.5, 1)
  auto mant = static_cast<uint64_t>(std::ldexp(f, 24));
  int bits = 24 - std::countr_zero(mant);
  uint64_t exp_mag = static_cast<uint64_t>(std::abs(e - 1));  // |v| = 1.x * 2^(e-1)
  return 1 + 4 * (bits - 1) + (v < 0 ? 1 : 0) + std::bit_width(exp_mag);
}

float Simplify(float v, ValueStep step) {
  if (!std::isfinite(v) || v == 0) return step == ValueStep::kZero ? 0.0f : v;
  const float sign = v < 0 ? -1.0f : 1.0f;
  switch (step) {
    case ValueStep::kZero:
      return 0.0f;
    case ValueStep::kOne:
      return sign;
    case ValueStep::kPowerOfTwo: {
      double l = std::round(std::log2(std::fabs(static_cast<double>(v))));
      return sign * static_cast<float>(std::exp2(l));
    }
    case ValueStep::kTwoBits: {
      int e = 0;
      double f = std::frexp(std::fabs(static_cast<double>(v)), &e);
      return sign * static_cast<float>(std::ldexp(std::round(f * 4) / 4, e));
    }
  }
  return v;
}

std::string_view ValueStepName(ValueStep s) {
  switch (s) {
    case ValueStep::kZero:
      return "zero";
    case ValueStep::kOne:
      return "one";
    case ValueStep::kPowerOfTwo:
      return "pow2";
    case ValueStep::kTwoBits:
      return "2bits";
  }
  return "?";
}

}  // namespace fusefuzz
