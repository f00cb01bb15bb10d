// dead-node-elim: a node whose output nobody reads and that is not a graph output  =>  removed.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class DeadNodeElim final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "dead-node-elim"; }
  std::string_view summary() const override {
    return "node whose output has no consumer and is not a graph output => removed";
  }

  RootOps roots() const override { return RootOps::Any(); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& n = g.nodes[static_cast<size_t>(anchor)];
    if (g.IsGraphOutput(n.output)) return NoMatch("output is a graph output");
    if (!g.Consumers(n.output).empty()) return NoMatch("output is used");
    return MakeMatch({anchor});
  }

  void Apply(Found m, Rewriter& rw) const override { rw.EraseNode(m.nodes[0]); }
};

}  // namespace

std::unique_ptr<Rule> MakeDeadNodeElim() { return std::make_unique<DeadNodeElim>(); }

}  // namespace fusefuzz
