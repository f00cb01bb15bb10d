// pad-value-not-zero-point: pad-qconv-fold without its value check. TVM #11127: a Pad was folded
// into a quantized conv although its value was not the input zero point; the conv pads with z_x
// (real 0), so every border output changes. Visible when v != z_x and the kernel overlaps the
// border.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>
#include <vector>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class PadValueNotZeroPoint final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-value-not-zero-point"; }
  std::string_view summary() const override {
    return "TVM #11127: Pad(constant v) -> QLinearConv => larger pads for any v; wrong when v != "
           "z_x";
  }
  RootOps roots() const override { return RootOps::Of({Op::QLinearConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = PadQConvProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    return MakeMatch({p, anchor}, SummedPads(g.nodes[size_t(p)], g.nodes[size_t(anchor)]));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldPadIntoConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPadValueNotZeroPoint() {
  return std::make_unique<PadValueNotZeroPoint>();
}

}  // namespace fusefuzz
