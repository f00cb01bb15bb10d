// Pass "bypass": removes a node by rewiring its consumers (and graph outputs) to one of its
// inputs of the same shape: activations, norms, same-size pads/pools/convs, binary ops against
// a constant or between two values (then the first operand survives).
#include <algorithm>
#include <set>

#include "harness/reduce/reduce.h"

namespace fusefuzz {
namespace {

// Index into n.inputs of the first value with the node's output shape, or -1.
int SameShapeInput(const Node& n, const ShapeMap& shapes) {
  const Shape& out = shapes.at(n.output);
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (shapes.at(n.inputs[k]) == out) return static_cast<int>(k);
  }
  return -1;
}

class BypassPass final : public ReducePass {
 public:
  std::string_view name() const override { return "bypass"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<std::string> eligible = Eligible(ctx);
    const ShapeMap& shapes = ctx.shapes();
    ReduceCase c = ctx.current();
    Graph& g = c.graph;
    for (int64_t t = begin; t < end; ++t) {
      int i = g.NodeIndex(eligible[static_cast<size_t>(t)]);
      // Inputs may have been rewired by an earlier bypass in this chunk; replacements always
      // have the replaced value's shape, so `shapes` still applies.
      const Node n = g.nodes[static_cast<size_t>(i)];
      int k = SameShapeInput(n, shapes);
      if (k < 0) continue;
      g.nodes.erase(g.nodes.begin() + i);
      ReplaceUses(g, n.output, n.inputs[static_cast<size_t>(k)]);
    }
    // Outputs stay distinct and never become graph inputs (a pass-through is no test).
    std::vector<std::string> outs;
    std::set<std::string> seen;
    for (const auto& o : g.outputs) {
      if (g.IsGraphInput(o) || !seen.insert(o).second) continue;
      outs.push_back(o);
    }
    if (outs.empty()) return std::nullopt;
    g.outputs = std::move(outs);
    return c;
  }

 private:
  static std::vector<std::string> Eligible(ReduceContext& ctx) {
    const ShapeMap& shapes = ctx.shapes();
    std::vector<std::string> names;
    for (const Node& n : ctx.current().graph.nodes) {
      if (SameShapeInput(n, shapes) >= 0) names.push_back(n.name);
    }
    return names;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeBypassPass() { return std::make_unique<BypassPass>(); }

}  // namespace fusefuzz
