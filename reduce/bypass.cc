// Pass "bypass": removes a node by rewiring its consumers (and graph outputs) to one of its
// inputs of the same shape: activations, norms, same-size pads/pools/convs, binary ops against
// a constant or between two values (mode "first" keeps the first such operand, mode "second"
// the last). A node whose output only leaves the graph may also hand over an input of another
// shape (a final Concat, GlobalAvgPool or strided conv): graph outputs may have any shape.
#include <algorithm>
#include <set>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

// Index into n.inputs of the value that replaces the node's output in `mode`, or -1.
int Replacement(const Graph& g, const Node& n, const ShapeMap& shapes, int mode) {
  const Shape& out = shapes.at(n.output);
  std::vector<int> same;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (shapes.at(n.inputs[k]) == out) same.push_back(static_cast<int>(k));
  }
  if (mode == 1) return same.size() >= 2 ? same.back() : -1;
  if (!same.empty()) return same.front();
  const bool sink = g.IsGraphOutput(n.output) && g.Consumers(n.output).empty();
  return sink ? 0 : -1;
}

class BypassPass final : public ReducePass {
 public:
  std::string_view name() const override { return "bypass"; }
  int modes() const override { return 2; }
  std::string mode_name(int mode) const override { return mode == 0 ? "first" : "second"; }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Eligible(ctx, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<std::string> eligible = Eligible(ctx, mode);
    const ShapeMap& shapes = ctx.shapes();
    ReduceCase c = ctx.current();
    Graph& g = c.graph;
    for (int64_t t = begin; t < end; ++t) {
      int i = g.NodeIndex(eligible[static_cast<size_t>(t)]);
      // Inputs may have been rewired by an earlier bypass in this chunk; replacements of
      // consumed values always have the replaced value's shape, so `shapes` still applies.
      const Node n = g.nodes[static_cast<size_t>(i)];
      int k = Replacement(g, n, shapes, mode);
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
  static std::vector<std::string> Eligible(ReduceContext& ctx, int mode) {
    const ShapeMap& shapes = ctx.shapes();
    const Graph& g = ctx.current().graph;
    std::vector<std::string> names;
    for (const Node& n : g.nodes) {
      if (Replacement(g, n, shapes, mode) >= 0) names.push_back(n.name);
    }
    return names;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeBypassPass() { return std::make_unique<BypassPass>(); }

}  // namespace fusefuzz
