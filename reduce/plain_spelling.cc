// Pass "plain-spelling": writes a node the plain way (drops its spelling, ir/spellings.def).
// Kept only when the case still fails the same way: a bug that needs how the node is written
// (F.relu instead of nn.ReLU, a Dropout left in the ONNX model) keeps its spelling; any other
// spelling goes, so a minimized case carries only the spellings its failure needs.
#include <vector>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

std::vector<size_t> Spelled(const Graph& g) {
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!g.nodes[i].spelling.empty()) out.push_back(i);
  }
  return out;
}

class PlainSpellingPass final : public ReducePass {
 public:
  std::string_view name() const override { return "plain-spelling"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Spelled(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> spelled = Spelled(ctx.current().graph);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t)
      c.graph.nodes[spelled[static_cast<size_t>(t)]].spelling.clear();
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakePlainSpellingPass() {
  return std::make_unique<PlainSpellingPass>();
}

}  // namespace fusefuzz
