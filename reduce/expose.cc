// Pass "expose": removes a node that only leaves the graph (a graph output nothing consumes) and
// makes the values it read graph outputs instead. Where bypass keeps one operand, this keeps
// all of them: a value that must have two uses to fail (a conv output that the BN fold
// overwrites in place) keeps them, so Conv -> BN -> Add(bn, conv), -> Mul or -> Concat all
// minimize to the Conv -> BN whose conv output is also a graph output.
#include <algorithm>
#include <vector>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

std::vector<size_t> Eligible(const Graph& g) {
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!g.IsGraphOutput(n.output) || !g.Consumers(n.output).empty()) continue;
    // Only worth it with two node-produced operands: with one, bypass does the same.
    int produced = 0;
    for (const std::string& in : n.inputs) produced += g.ProducerIndex(in) >= 0 ? 1 : 0;
    if (produced >= 2) out.push_back(i);
  }
  return out;
}

class ExposePass final : public ReducePass {
 public:
  std::string_view name() const override { return "expose"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph);
    ReduceCase c = ctx.current();
    Graph& g = c.graph;
    std::vector<bool> drop(g.nodes.size(), false);
    for (int64_t t = begin; t < end; ++t) drop[eligible[static_cast<size_t>(t)]] = true;
    std::vector<std::string> outs;
    auto add = [&](const std::string& v) {
      if (std::find(outs.begin(), outs.end(), v) == outs.end()) outs.push_back(v);
    };
    for (const std::string& o : g.outputs) {
      const int p = g.ProducerIndex(o);
      if (p < 0 || !drop[size_t(p)]) {
        add(o);
        continue;
      }
      for (const std::string& in : g.nodes[size_t(p)].inputs) {
        if (g.ProducerIndex(in) >= 0) add(in);  // never a graph input: a pass-through
      }
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(kept);
    g.outputs = std::move(outs);
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeExposePass() { return std::make_unique<ExposePass>(); }

}  // namespace fusefuzz
