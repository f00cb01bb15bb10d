// The reference interpreter: verifies the graph, checks the inputs, then evaluates the nodes in
// their (topological) order, one op-family function per node.
#include <cfloat>
#include <cmath>
#include <stdexcept>

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/reference/quant_ref.h"
#include "kernels/reference/ref_ops.h"

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

RefTensorMap RunReference(const Graph& g, const TensorMap& inputs, bool all_values,
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
    values[n.output] = std::move(out);
    if (!all_values) {
      for (const auto& name : n.inputs) {
        if (last_use.at(name) == i && !g.IsGraphOutput(name)) values.erase(name);
      }
    }
  }
  if (all_values) return values;
  RefTensorMap outs;
  for (const auto& name : g.outputs) outs[name] = values.at(name);
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
