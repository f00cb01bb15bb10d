// pool-activation-reorder: MaxPool(act(x))  =>  act(MaxPool(x)) for monotone non-decreasing
// activations: max_i f(x_i) = f(max_i x_i). MaxPool pads count as -inf and every window holds a
// real element, so padding does not matter. One direction only (the activation then runs on
// fewer elements), so the driver cannot oscillate.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

// "" when act is monotone non-decreasing, else why not. Which activations are (and under which
// condition) is the `monotone` column of ir/ops.def.
std::string MonotoneProblem(const Node& act) {
  switch (MonotonicityOf(act.op)) {
    case Monotonicity::kAlways:
      return "";
    case Monotonicity::kIfAlphaNonNegative:
      return AttrFloat(act, "alpha") >= 0 ? "" : "negative alpha: not monotone";
    case Monotonicity::kIfSlopesNonNegative:
      for (float s : FindParam(act, "slope")->data) {
        if (!(s >= 0)) return "a negative PRelu slope: not monotone";
      }
      return "";
    case Monotonicity::kNever:
    case Monotonicity::kNotActivation:
      break;
  }
  return std::string(OpName(act.op)) + " is not monotone";
}

class PoolActivationReorder final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "pool-activation-reorder"; }
  std::string_view summary() const override {
    return "MaxPool(act(x)) => act(MaxPool(x)); act monotone non-decreasing (Relu, Relu6, Clip, "
           "Sigmoid, Tanh, LeakyRelu/HardSigmoid/Elu alpha >= 0, PRelu slopes >= 0); act output "
           "has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::MaxPool}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = ActivationMaxPoolProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    if (auto why = MonotoneProblem(g.nodes[size_t(p)]); !why.empty()) return NoMatch(why);
    return MakeMatch({p, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    SwapActivationAndPool(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakePoolActivationReorder() {
  return std::make_unique<PoolActivationReorder>();
}

}  // namespace fusefuzz
