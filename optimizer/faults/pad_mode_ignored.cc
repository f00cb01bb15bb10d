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

class PadModeIgnored final : public Rule {
 public:
  std::string_view name() const override { return "pad-mode-ignored"; }
  std::string_view summary() const override {
    return "Pad (any mode, any value) -> Conv/FusedConv => conv with larger zero pads; wrong at "
           "the borders for reflect mode or a non-zero fill value";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& conv = g.nodes[size_t(anchor)];
    if (!IsConvLike(conv.op)) return NoMatch("anchor is not a Conv or FusedConv");
    const int p = ProducerOfInput(g, conv, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Pad) return NoMatch("conv input is not a Pad");
    const Node& pad = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, pad.output, anchor); !why.empty()) return NoMatch(why);
    std::vector<int64_t> pads = AttrInts(conv, "pads"), extra = AttrInts(pad, "pads");
    for (size_t i = 0; i < 4; ++i) pads[i] += extra[i];
    return MakeMatch({p, anchor}, std::move(pads));
  }

  void Apply(RuleMatch m, Rewriter& rw) const override {
    const int pad = m.nodes[0], conv = m.nodes[1];
    rw.SetInput(conv, 0, rw.node(pad).inputs[0]);
    rw.SetAttr(conv, "pads", std::move(MatchData<std::vector<int64_t>>(m)));
    rw.EraseNode(pad);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultPadModeIgnored() { return std::make_unique<PadModeIgnored>(); }

}  // namespace fusefuzz
