// pad-border-correction: pad-qconv-fold testing the pad value against the integer 0 instead of
// z_x. TVM #13364: the precomputed correction sum_k w_k * z_x was wrong on padded borders, where
// the padded integers were 0 rather than z_x (MLPerf Tiny kws below target). Here a Pad of
// integer 0 is folded into the conv, which pads with z_x: visible when z_x != 0 on border
// outputs.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>
#include <vector>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class PadBorderCorrection final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-border-correction"; }
  std::string_view summary() const override {
    return "TVM #13364: Pad(constant 0) -> QLinearConv => larger pads; the integer 0 taken as the "
           "pad, wrong on the borders when z_x != 0";
  }
  RootOps roots() const override { return RootOps::Of({Op::QLinearConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = PadQConvProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    if (AttrFloat(g.nodes[size_t(p)], "value") != 0) return NoMatch("Pad value is not 0");
    return MakeMatch({p, anchor}, SummedPads(g.nodes[size_t(p)], g.nodes[size_t(anchor)]));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldPadIntoConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPadBorderCorrection() {
  return std::make_unique<PadBorderCorrection>();
}

}  // namespace fusefuzz
