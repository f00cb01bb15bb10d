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

// "" when act is monotone non-decreasing, else why not.
std::string MonotoneProblem(const Node& act) {
  switch (act.op) {
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::Sigmoid:
    case Op::Tanh:
      return "";
    case Op::LeakyRelu:
    case Op::HardSigmoid:
    case Op::Elu:
      return AttrFloat(act, "alpha") >= 0 ? "" : "negative alpha: not monotone";
    case Op::PRelu:
      for (float s : FindParam(act, "slope")->data) {
        if (!(s >= 0)) return "a negative PRelu slope: not monotone";
      }
      return "";
    default:
      return std::string(OpName(act.op)) + " is not monotone";
  }
}

class PoolActivationReorder final : public Rule {
 public:
  std::string_view name() const override { return "pool-activation-reorder"; }
  std::string_view summary() const override {
    return "MaxPool(act(x)) => act(MaxPool(x)); act monotone non-decreasing (Relu, Relu6, Clip, "
           "Sigmoid, Tanh, LeakyRelu/HardSigmoid/Elu alpha >= 0, PRelu slopes >= 0); act output "
           "has no other consumer and is not a graph output";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& pool = g.nodes[static_cast<size_t>(anchor)];
    if (pool.op != Op::MaxPool) return NoMatch("anchor is not a MaxPool");
    int p = ProducerOfInput(g, pool, 0);
    if (p < 0 || !IsActivation(g.nodes[size_t(p)].op)) {
      return NoMatch("MaxPool input is not produced by an activation");
    }
    const Node& act = g.nodes[size_t(p)];
    if (auto why = MonotoneProblem(act); !why.empty()) return NoMatch(why);
    if (auto why = SoleUseProblem(g, act.output, anchor); !why.empty()) return NoMatch(why);
    return RuleMatch{{p, anchor}, {}};
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

std::unique_ptr<Rule> MakePoolActivationReorder() {
  return std::make_unique<PoolActivationReorder>();
}

}  // namespace fusefuzz
