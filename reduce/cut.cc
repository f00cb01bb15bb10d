// Pass "cut": replaces a node by a NEW graph input of the same name, fed with the reference
// values of that node's output rounded to float32 (XLA hlo_bisect / Polygraphy style). Everything
// upstream that only fed it then dies. Nodes producing graph outputs are not cut (the output
// would become a pass-through of an input).
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class CutPass final : public ReducePass {
 public:
  std::string_view name() const override { return "cut"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<int> eligible = Eligible(ctx.current().graph);
    const RefTensorMap& values = ctx.all_values();
    const ShapeMap& shapes = ctx.shapes();
    ReduceCase c = ctx.current();
    std::vector<bool> cut(c.graph.nodes.size(), false);
    for (int64_t t = begin; t < end; ++t) cut[static_cast<size_t>(eligible[size_t(t)])] = true;
    std::vector<Node> kept;
    for (size_t i = 0; i < c.graph.nodes.size(); ++i) {
      Node& n = c.graph.nodes[i];
      if (!cut[i]) {
        kept.push_back(std::move(n));
        continue;
      }
      c.graph.inputs.push_back({n.output, shapes.at(n.output)});
      c.inputs[n.output] = ToFloatTensor(values.at(n.output));
    }
    c.graph.nodes = std::move(kept);
    return c;
  }

 private:
  static std::vector<int> Eligible(const Graph& g) {
    std::vector<int> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!g.IsGraphOutput(g.nodes[i].output)) out.push_back(static_cast<int>(i));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeCutPass() { return std::make_unique<CutPass>(); }

}  // namespace fusefuzz
