// The reference interpreter: verifies the graph, checks the inputs, then evaluates the nodes in
// their (topological) order, one op-family function per node.
#include <cfloat>
#include <cmath>
#include <stdexcept>

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/reference/quant_ref.h"
#include "kernels/reference/ref_ops.h"
#include "kernels/reference/teacher_forced.h"

namespace fusefuzz {
namespace ref {

std::string NodeWhere(const Node& n) {
  return "node '" + n.name + "' (" + std::string(OpName(n.op)) + ")";
}

namespace {

RefTensor RunNode(const Node& n, const Inputs& in, QuantizeRounding rounding) {
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv:
      if (n.op == Op::QLinearConv) return RunQLinearConv(n, in);
      return RunConv(n, in);
    case OpFamily::kNorm:
      return RunNorm(n, in);
    case OpFamily::kActivation:
      return RunActivation(n, in);
    case OpFamily::kBinary:
      return RunBinary(n, in);
    case OpFamily::kPad:
      return RunPad(n, in);
    case OpFamily::kPool:
      return RunPool(n, in);
    case OpFamily::kConcat:
    case OpFamily::kIdentity:
    case OpFamily::kReshape:
    case OpFamily::kLayout:
      return RunConcat(n, in);
    case OpFamily::kGemm:
      return RunGemm(n, in);
    case OpFamily::kQuant:
      return RunQuant(n, in, rounding);
    case OpFamily::kReduce:
      return RunReduce(n, in);
    case OpFamily::kMath:
      return RunMath(n, in);
  }
  throw std::logic_error("RunReference: unknown op family");
}

}  // namespace
}  // namespace ref

namespace {

// The engine's integer `c` in place of the reference's at one element of an integer-valued
// tensor: exact (E = 0, no spread carried on). A value the type cannot hold (not finite, not a
// whole number, out of range) keeps the reference's integer: a DequantizeLinear downstream must
// not be fed what it refuses, and the layer that made it is judged failing already.
void ForceElement(RefTensor* t, size_t i, float c) {
  const double v = static_cast<double>(c);
  if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(t->grid_qmin) ||
      v > static_cast<double>(t->grid_qmax)) {
    return;
  }
  t->value[i] = v;
  t->grid_t[i] = v;
  t->grid_e[i] = 0;
  t->grid_es[i] = 0;
  t->mag[i] = std::fabs(v);
  t->sigma[i] = 0;
}

}  // namespace

RefTensorMap RunReference(const Graph& g, const TensorMap& inputs, bool all_values,
                          QuantizeRounding rounding) {
  return RunReferenceTeacherForced(g, inputs, {}, all_values, rounding);
}

RefTensorMap RunReferenceTeacherForced(const Graph& g, const TensorMap& inputs,
                                       const TensorMap& forced, bool all_values,
                                       QuantizeRounding rounding) {
  // The reference is the judge: never trust that the caller verified the graph.
  const ShapeMap shapes = VerifyGraph(g);
  RefTensorMap values;
  for (const ValueInfo& vi : g.inputs) {
    const std::string where = "graph input '" + vi.name + "'";
    auto it = inputs.find(vi.name);
    if (it == inputs.end()) throw InputError(where, "no tensor given for this input");
    const Tensor& t = it->second;
    if (t.shape != vi.shape) {
      throw InputError(
          where, "expected shape " + ShapeToString(vi.shape) + ", got " + ShapeToString(t.shape));
    }
    if (t.size() != NumElements(t.shape)) {
      throw InputError(
          where, "has " + std::to_string(t.size()) + " values for shape " + ShapeToString(t.shape));
    }
    values[vi.name] = ref::FromFloat(t);
  }

  RefTensorMap judged;  // the forced values as computed, before forcing
  // Index of the last node reading each value, so that intermediates can be freed early.
  std::map<std::string, size_t> last_use;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& name : g.nodes[i].inputs) last_use[name] = i;
  }

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    ref::Inputs in;
    for (const auto& name : n.inputs) in.push_back(&values.at(name));
    RefTensor out = ref::RunNode(n, in, rounding);
    if (out.shape != shapes.at(n.output) || out.value.size() != out.mag.size() ||
        out.value.size() != out.sigma.size() || out.value.size() != out.peak.size() ||
        (!out.grid_t.empty() &&
         (out.grid_t.size() != out.value.size() || out.grid_e.size() != out.value.size() ||
          out.grid_es.size() != out.value.size())) ||
        static_cast<int64_t>(out.value.size()) != NumElements(out.shape)) {
      throw std::logic_error("RunReference: " + ref::NodeWhere(n) + " produced shape " +
                             ShapeToString(out.shape) + ", shape inference says " +
                             ShapeToString(shapes.at(n.output)));
    }
    if (auto f = forced.find(n.output);
        f != forced.end() && !out.grid_t.empty() && f->second.shape == out.shape) {
      // The reference of this value, computed from the forced integers before it, is what the
      // caller judges; what flows on is the engine's own integers.
      judged[n.output] = out;
      for (size_t k = 0; k < out.value.size(); ++k) ForceElement(&out, k, f->second.data[k]);
    }
    values[n.output] = std::move(out);
    if (!all_values) {
      for (const auto& name : n.inputs) {
        if (last_use.at(name) == i && !g.IsGraphOutput(name)) values.erase(name);
      }
    }
  }
  if (all_values) {
    for (auto& [name, t] : judged) values[name] = std::move(t);
    return values;
  }
  RefTensorMap outs;
  for (const auto& name : g.outputs) outs[name] = values.at(name);
  for (auto& [name, t] : judged) outs[name] = std::move(t);
  return outs;
}

Tensor ToFloatTensor(const RefTensor& t) {
  Tensor out;
  out.shape = t.shape;
  out.data.resize(t.value.size());
  // Doubles at or beyond FLT_MAX + half an ulp (2^128 - 2^103) round to infinity; converting
  // them with a cast would be undefined behaviour in C++, so saturate explicitly.
  const double overflow = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  for (size_t i = 0; i < t.value.size(); ++i) {
    const double v = t.value[i];
    if (std::isfinite(v) && std::fabs(v) > FLT_MAX) {
      const float big = std::fabs(v) >= overflow ? HUGE_VALF : FLT_MAX;
      out.data[i] = std::signbit(v) ? -big : big;
    } else {
      out.data[i] = static_cast<float>(v);
    }
  }
  return out;
}

}  // namespace fusefuzz
