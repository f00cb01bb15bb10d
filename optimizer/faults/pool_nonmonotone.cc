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

class PoolNonmonotone final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "pool-nonmonotone"; }
  std::string_view summary() const override {
    return "MaxPool(act(x)) => act(MaxPool(x)) for any activation; wrong for non-monotone "
           "activations (SiLU, GELU, HardSwish, negative slopes) on windows where they decrease";
  }

  // pool-activation-reorder without its monotonicity check.
  RootOps roots() const override { return RootOps::Of({Op::MaxPool}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = ActivationMaxPoolProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    // A PRelu slope is per channel or scalar (ActivationMaxPoolProblem): MaxPool keeps channels.
    return MakeMatch({p, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    SwapActivationAndPool(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPoolNonmonotone() { return std::make_unique<PoolNonmonotone>(); }

}  // namespace fusefuzz
