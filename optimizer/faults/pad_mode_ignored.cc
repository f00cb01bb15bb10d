// pad-mode-ignored: pad-conv-fold that folds ANY Pad into the conv's zero padding: reflect pads
// and constant pads with a non-zero value become zeros.
//
// Reproduces Pad -> Conv fusions that checked the pad amounts but not the pad's mode or fill
// value (a conv can only pad with zeros), which turned reflection padding of image models
// (style transfer, super-resolution, CycleGAN-style generators) into zero padding. Wrong only
// at output elements whose window reads the padding, and only for reflect mode or a constant
// value != 0.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class PadModeIgnored final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-mode-ignored"; }
  std::string_view summary() const override {
    return "Pad (any mode, any value) -> Conv/FusedConv => conv with larger zero pads; wrong at "
           "the borders for reflect mode or a non-zero fill value";
  }

  // pad-conv-fold without its mode and fill value checks.
  RootOps roots() const override { return RootOps::Of({Op::Conv, Op::FusedConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = PadConvProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    return MakeMatch({p, anchor}, SummedPads(g.nodes[size_t(p)], g.nodes[size_t(anchor)]));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldPadIntoConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPadModeIgnored() { return std::make_unique<PadModeIgnored>(); }

}  // namespace fusefuzz
