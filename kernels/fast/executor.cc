// The fast executor: verifies the graph (for the value shapes), checks the inputs, then runs the
// nodes in order through the kernel table of the chosen ISA level, taking each output buffer from
// a per-thread pool and giving each intermediate back after its last use.
#include "kernels/fast/executor.h"

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/fast/fast_ops.h"
#include "kernels/fast/quant_op.h"

namespace fusefuzz {
namespace {

// Free buffers by element count. Kernels overwrite every output element, so a reused buffer is
// neither zero-filled nor cleared; a node's output is taken before its inputs are given back, so
// no output ever aliases an input of its node.
class TensorPool {
 public:
  Tensor Take(const Shape& shape) {
    const size_t n = static_cast<size_t>(NumElements(shape));
    auto it = free_.find(n);
    if (it == free_.end()) return Tensor(shape);
    Tensor t;
    t.shape = shape;
    t.data = std::move(it->second);
    free_.erase(it);
    bytes_ -= n * sizeof(float);
    return t;
  }
  void Give(Tensor&& t) {
    const size_t bytes = t.data.size() * sizeof(float);
    if (bytes == 0 || bytes_ + bytes > kMaxBytes) return;  // dropped (freed) instead
    bytes_ += bytes;
    free_.emplace(t.data.size(), std::move(t.data));
  }

 private:
  // Enough for every intermediate of the benchmark networks; a graph with larger ones still runs
  // (its extra buffers are freed as before).
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  std::multimap<size_t, std::vector<float>> free_;
  size_t bytes_ = 0;
};

void CheckOptions(const FastOptions& opts) {
  if (opts.threads < 1) {
    throw InputError("fast options", "threads must be >= 1, got " + std::to_string(opts.threads));
  }
}

// Runs node `n` into `y` (shaped and sized by the caller, values unspecified).
void RunInto(const fast::KernelTable& k, const Node& n, const std::vector<const Tensor*>& inputs,
             int threads, Tensor& y) {
  if (inputs.empty()) throw InputError("node '" + n.name + "'", "no inputs");
  const Tensor& x = *inputs[0];
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv:
      if (n.op == Op::QLinearConv) return fast::QuantOp(n, inputs, y, threads);
      return k.conv(n, inputs, threads, y);
    case OpFamily::kNorm:
      return k.norm(n, x, threads, y);
    case OpFamily::kActivation:
      return k.activation(n, x, threads, y);
    case OpFamily::kBinary:
      return k.binary(n, inputs, threads, y);
    case OpFamily::kPad:
      return fast::PadOp(n, x, y);
    case OpFamily::kPool:
      return k.pool(n, x, threads, y);
    case OpFamily::kConcat:
      return fast::ConcatOp(n, inputs, y);
    case OpFamily::kIdentity:
    case OpFamily::kReshape:  // Flatten, Reshape: row-major, the same data under a new shape
      std::copy(x.data.begin(), x.data.end(), y.data.begin());
      return;
    case OpFamily::kGemm:
      return k.gemm(n, x, threads, y);
    case OpFamily::kQuant:
      return fast::QuantOp(n, inputs, y, threads);
    case OpFamily::kReduce:
      return fast::ReduceOp(n, x, y);
    case OpFamily::kMath:
      return fast::MathOp(n, x, y);
    case OpFamily::kLayout:
      return fast::TransposeOp(n, x, y);
  }
  throw InputError("node '" + n.name + "'", "unknown op");
}

}  // namespace

Tensor RunFastNode(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out_shape,
                   const FastOptions& opts) {
  CheckOptions(opts);
  Tensor y(out_shape);
  RunInto(fast::KernelsFor(opts.isa), n, inputs, opts.threads, y);
  return y;
}

TensorMap RunFast(const Graph& g, const TensorMap& inputs, const FastOptions& opts) {
  return RunFastVerified(g, VerifyGraph(g), inputs, opts);
}

TensorMap RunFastVerified(const Graph& g, const ShapeMap& shapes, const TensorMap& inputs,
                          const FastOptions& opts) {
  CheckOptions(opts);
  const fast::KernelTable& kernels = fast::KernelsFor(opts.isa);
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
  thread_local TensorPool pool;
  std::map<std::string, Tensor> owned;
  // Every owned buffer goes back to the pool, also when a kernel throws.
  struct GiveBack {
    std::map<std::string, Tensor>& owned;
    ~GiveBack() {
      for (auto& [name, t] : owned) pool.Give(std::move(t));
    }
  } give_back{owned};
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::vector<const Tensor*> args;
    for (const auto& v : n.inputs) args.push_back(env.at(v));
    Tensor out = pool.Take(shapes.at(n.output));
    try {
      RunInto(kernels, n, args, opts.threads, out);
    } catch (...) {
      pool.Give(std::move(out));
      throw;
    }
    env[n.output] = &(owned[n.output] = std::move(out));
    for (const auto& v : n.inputs) {
      auto it = owned.find(v);
      if (last_use[v] == i && it != owned.end() && !g.IsGraphOutput(v)) {
        env.erase(v);
        pool.Give(std::move(it->second));
        owned.erase(it);
      }
    }
  }
  TensorMap result;
  for (const auto& o : g.outputs) result[o] = *env.at(o);
  return result;
}

}  // namespace fusefuzz
