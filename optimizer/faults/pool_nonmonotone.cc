// pool-nonmonotone: pool-activation-reorder without its monotonicity check: MaxPool(act(x))
// becomes act(MaxPool(x)) for every activation, SiLU, GELU, HardSwish and negative-slope
// LeakyRelu/PRelu included.
//
// Reproduces the "apply the activation after the pool, on 4x fewer elements" optimization done
// with a whitelist that grew past the monotone activations: max_i f(x_i) = f(max_i x_i) holds
// only for non-decreasing f. Wrong at windows whose elements lie where f decreases (SiLU below
// about -1.28, GELU below about -0.75, HardSwish below -1.5, LeakyRelu with alpha < 0 below 0)
// and the largest x is not the element with the largest f(x).
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class PoolNonmonotone final : public Rule {
 public:
  std::string_view name() const override { return "pool-nonmonotone"; }
  std::string_view summary() const override {
    return "MaxPool(act(x)) => act(MaxPool(x)) for any activation; wrong for non-monotone "
           "activations (SiLU, GELU, HardSwish, negative slopes) on windows where they decrease";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& pool = g.nodes[size_t(anchor)];
    if (pool.op != Op::MaxPool) return NoMatch("anchor is not a MaxPool");
    const int p = ProducerOfInput(g, pool, 0);
    if (p < 0 || !IsActivation(g.nodes[size_t(p)].op)) {
      return NoMatch("MaxPool input is not produced by an activation");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(p)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    // A per-channel PRelu slope keeps its channels: MaxPool does not mix channels.
    return MakeMatch({p, anchor}, 0);
  }

  void Apply(RuleMatch m, Rewriter& rw) const override {
    const int act_index = m.nodes[0], pool_index = m.nodes[1];
    Node act = rw.node(act_index), pool = rw.node(pool_index);
    const std::string pooled = rw.FreshValueName(pool.output + "_pooled");
    const std::string y = pool.output;
    pool.inputs = {act.inputs[0]};
    pool.output = pooled;
    act.inputs = {pooled};
    act.output = y;
    rw.ReplaceNode(act_index, std::move(pool));
    rw.ReplaceNode(pool_index, std::move(act));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPoolNonmonotone() { return std::make_unique<PoolNonmonotone>(); }

}  // namespace fusefuzz
