// The fast executor: verifies the graph (for the value shapes), checks the inputs, then runs the
// nodes in order, dropping each intermediate after its last use.
#include "kernels/fast/executor.h"

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz {

Tensor RunFastNode(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out_shape,
                   const FastOptions& opts) {
  if (opts.threads < 1) {
    throw InputError("fast options", "threads must be >= 1, got " + std::to_string(opts.threads));
  }
  if (inputs.empty()) throw InputError("node '" + n.name + "'", "no inputs");
  const int threads = opts.threads;
  const Tensor& x = *inputs[0];
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv:
      return fast::Conv(n, x, out_shape, fast::Epilogue(n, inputs, out_shape), threads);
    case OpFamily::kNorm:
      return fast::NormOp(n, x, threads);
    case OpFamily::kActivation:
      return fast::ActivationOp(n, x, threads);
    case OpFamily::kBinary:
      return fast::BinaryOp(n, inputs, out_shape, threads);
    case OpFamily::kPad:
      return fast::PadOp(n, x, out_shape);
    case OpFamily::kPool:
      return fast::PoolOp(n, x, out_shape, threads);
    case OpFamily::kConcat:
      return fast::ConcatOp(n, inputs, out_shape);
    case OpFamily::kIdentity:
      return x;
    case OpFamily::kReshape:
      return fast::ReshapeOp(x, out_shape);
    case OpFamily::kGemm:
      return fast::GemmOp(n, x, out_shape, threads);
  }
  throw InputError("node '" + n.name + "'", "unknown op");
}

TensorMap RunFast(const Graph& g, const TensorMap& inputs, const FastOptions& opts) {
  const ShapeMap shapes = VerifyGraph(g);
  std::map<std::string, const Tensor*> env;
  for (const ValueInfo& in : g.inputs) {
    const std::string where = "input '" + in.name + "'";
    auto it = inputs.find(in.name);
    if (it == inputs.end()) throw InputError(where, "missing");
    const Tensor& t = it->second;
    if (t.shape != in.shape) {
      throw InputError(
          where, "expected shape " + ShapeToString(in.shape) + ", got " + ShapeToString(t.shape));
    }
    if (t.size() != NumElements(t.shape)) {
      throw InputError(where,
                       std::to_string(t.size()) + " values for shape " + ShapeToString(t.shape));
    }
    env[in.name] = &t;
  }
  // Index of the last node reading each value, to free intermediates early.
  std::map<std::string, size_t> last_use;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& v : g.nodes[i].inputs) last_use[v] = i;
  }
  std::map<std::string, Tensor> owned;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::vector<const Tensor*> args;
    for (const auto& v : n.inputs) args.push_back(env.at(v));
    Tensor out = RunFastNode(n, args, shapes.at(n.output), opts);
    env[n.output] = &(owned[n.output] = std::move(out));
    for (const auto& v : n.inputs) {
      if (last_use[v] == i && owned.count(v) && !g.IsGraphOutput(v)) {
        env.erase(v);
        owned.erase(v);
      }
    }
  }
  TensorMap result;
  for (const auto& o : g.outputs) result[o] = *env.at(o);
  return result;
}

}  // namespace fusefuzz
