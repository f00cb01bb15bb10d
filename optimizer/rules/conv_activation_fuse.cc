// conv-activation-fuse: Conv/FusedConv -> activation  =>  FusedConv whose epilogue ends with the
// activation (its attrs and params, e.g. PRelu slope, LeakyRelu alpha, Clip bounds, Gelu form).
// Existing epilogue steps keep their order; the activation runs after them, as it did.
// A PRelu fuses only when its slope is per channel or a scalar ([C, 1, 1], [1, C, 1, 1], [1],
// ...; stored as [M, 1, 1] or [1]): a slope along W ([W], even when W == C) or H varies inside a
// channel, which an epilogue step cannot express.
#include <memory>

#include "ir/broadcast.h"
#include "ir/verifier.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class ConvActivationFuse final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "conv-activation-fuse"; }
  std::string_view summary() const override {
    return "Conv/FusedConv -> activation => FusedConv with the activation appended to its "
           "epilogue; conv output has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Family(OpFamily::kActivation); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& act = g.nodes[static_cast<size_t>(anchor)];
    int p = ProducerOfInput(g, act, 0);
    if (p < 0 || !IsConvLike(g.nodes[size_t(p)].op)) {
      return NoMatch("activation input is not produced by a Conv or FusedConv");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(p)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    if (act.op == Op::PRelu &&
        !AsPerChannelSlope(act.params.at("slope").shape, ctx.shapes().at(act.inputs[0]))) {
      return NoMatch("PRelu slope is not per channel: it varies along N, H or W");
    }
    return MakeMatch({p, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    // A PRelu slope is per channel or a scalar (Match).
    AppendEpilogueStep(rw, m.nodes[0], m.nodes[1], Op::FusedConv,
                       ActivationStep(rw.node(m.nodes[1]), Op::FusedConv));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeConvActivationFuse() { return std::make_unique<ConvActivationFuse>(); }

}  // namespace fusefuzz
