// clip-without-half-step: quantize-activation-drop with the half-step test replaced by a
// comparison against the neighbouring grid point. ONNX Runtime #22580 / #22359: Clip -> Q was
// removed as redundant when its bounds were "at" the quantized range's edges, without testing
// that they round to qmin / qmax; a bound between the edge's grid point and the next one keeps
// clamping elements to qmin + 1 (qmax - 1), so the elements between the bound and half a step
// are off by one once the Clip is gone. Visible when a bound lies more than half a step inside
// the range (but within one step) and elements reach beyond it.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class ClipWithoutHalfStep final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "clip-without-half-step"; }
  std::string_view summary() const override {
    return "ONNX Runtime #22580: Clip/Relu6 -> Q => Q when each bound is within ONE step of the "
           "range's edge; wrong for a bound more than half a step inside";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int act = -1;
    if (auto why = ActivationQuantizeProblem(g, anchor, &act); !why.empty()) return NoMatch(why);
    if (g.nodes[size_t(act)].op == Op::Relu) return NoMatch("a Relu has no upper bound to test");
    const QuantParams& y = QuantOf(g.nodes[size_t(anchor)], "y");
    if (auto why = PositiveScaleProblem(y, "Q 'y'"); !why.empty()) return NoMatch(why);
    double lo = 0, hi = 0;
    if (auto why = ActivationBounds(g.nodes[size_t(act)], &lo, &hi); !why.empty()) {
      return NoMatch(why);
    }
    for (size_t c = 0; c < y.scale.size(); ++c) {
      const double s = y.scale[c], z = static_cast<double>(y.zero_point[c]);
      if (!(lo / s + z <= double(y.qmin()) + 1)) return NoMatch("lower bound inside the range");
      if (!(hi / s + z >= double(y.qmax()) - 1)) return NoMatch("upper bound inside the range");
    }
    return MakeMatch({act, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    DropActivationBeforeQuantize(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultClipWithoutHalfStep() {
  return std::make_unique<ClipWithoutHalfStep>();
}

}  // namespace fusefuzz
