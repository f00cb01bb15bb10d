// quantize-activation-drop: Relu / Relu6 / Clip -> QuantizeLinear  =>  QuantizeLinear, when the
// clamp cannot change a quantized value. Q is monotone for s > 0, so Q(clamp(x, lo, hi)) ==
// clamp(Q(x), Q(lo), Q(hi)), and the clamp is a no-op iff Q(lo) == qmin and Q(hi) == qmax in
// every channel. Q(lo) is computed exactly as QuantizeLinear does (x / s in float32, ties to
// even): the half-step test. Relu is dropped only when the zero point is qmin (or the scale so
// small that 0 rounds to qmin), never because "the range starts at 0".
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QuantizeActivationDrop final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "quantize-activation-drop"; }
  std::string_view summary() const override {
    return "Relu/Relu6/Clip -> QuantizeLinear => QuantizeLinear; every scale > 0; Q(lower "
           "bound) == qmin and Q(upper bound) == qmax in every channel (the half-step test, "
           "with QuantizeLinear's own rounding); activation output has no other consumer and "
           "is not a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int act = -1;
    if (auto why = ActivationQuantizeProblem(g, anchor, &act); !why.empty()) return NoMatch(why);
    const QuantParams& y = QuantOf(g.nodes[size_t(anchor)], "y");
    if (auto why = PositiveScaleProblem(y, "Q 'y'"); !why.empty()) return NoMatch(why);
    double lo = 0, hi = 0;
    if (auto why = ActivationBounds(g.nodes[size_t(act)], &lo, &hi); !why.empty()) {
      return NoMatch(why);
    }
    if (auto why = LowerBoundExactProblem(y, lo); !why.empty()) return NoMatch(why);
    if (auto why = UpperBoundExactProblem(y, hi); !why.empty()) return NoMatch(why);
    return MakeMatch({act, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    DropActivationBeforeQuantize(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQuantizeActivationDrop() {
  return std::make_unique<QuantizeActivationDrop>();
}

}  // namespace fusefuzz
