// relu6-outside-range: quantize-activation-drop testing only the lower bound of a Relu6 / Clip.
// TensorFlow #53859: the fused ReLU6's upper clamp bound was taken as lying outside the
// quantized range (so as a no-op) without checking it; when s_y * (qmax - z_y) > 6 the values
// above 6 are no longer clamped. Visible when the range reaches beyond the upper bound by more
// than half a step and some input exceeds the bound.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class Relu6OutsideRange final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "relu6-outside-range"; }
  std::string_view summary() const override {
    return "TensorFlow #53859: Relu6/Clip -> Q => Q with only the lower bound tested; wrong when "
           "Q(upper bound) < qmax";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int act = -1;
    if (auto why = ActivationQuantizeProblem(g, anchor, &act); !why.empty()) return NoMatch(why);
    if (g.nodes[size_t(act)].op == Op::Relu) return NoMatch("a Relu has no upper bound");
    const QuantParams& y = QuantOf(g.nodes[size_t(anchor)], "y");
    if (auto why = PositiveScaleProblem(y, "Q 'y'"); !why.empty()) return NoMatch(why);
    double lo = 0, hi = 0;
    if (auto why = ActivationBounds(g.nodes[size_t(act)], &lo, &hi); !why.empty()) {
      return NoMatch(why);
    }
    if (auto why = LowerBoundExactProblem(y, lo); !why.empty()) return NoMatch(why);
    return MakeMatch({act, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    DropActivationBeforeQuantize(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultRelu6OutsideRange() { return std::make_unique<Relu6OutsideRange>(); }

}  // namespace fusefuzz
