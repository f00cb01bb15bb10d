// identity-elim: y = Identity(x)  =>  uses of y read x. When y is a graph output, its name is
// kept: x's producer is renamed to produce y (and x's uses read y) — possible when x is produced
// by a node and is not itself a graph output; otherwise refused.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class IdentityElim final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "identity-elim"; }
  std::string_view summary() const override {
    return "Identity => removed, uses of its output read its input; when the output is a graph "
           "output the input's producer is renamed instead (refused when the input is a graph "
           "input or a graph output)";
  }

  RootOps roots() const override { return RootOps::Of({Op::Identity}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& n = g.nodes[static_cast<size_t>(anchor)];
    if (!g.IsGraphOutput(n.output)) return MakeMatch({anchor});
    int p = g.ProducerIndex(n.inputs[0]);
    if (p < 0) return NoMatch("graph output '" + n.output + "' copies graph input directly");
    if (g.IsGraphOutput(n.inputs[0])) {
      return NoMatch("graph output '" + n.output + "' copies graph output '" + n.inputs[0] + "'");
    }
    return MakeMatch({anchor, p});
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int id = m.nodes[0];
    const std::string x = rw.node(id).inputs[0], y = rw.node(id).output;
    if (m.nodes.size() == 1) {
      rw.ReplaceAllUsesWith(y, x);
    } else {
      rw.SetOutput(m.nodes[1], y);
      rw.ReplaceAllUsesWith(x, y);
    }
    rw.EraseNode(id);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeIdentityElim() { return std::make_unique<IdentityElim>(); }

}  // namespace fusefuzz
