// pad-conv-fold: Pad(constant, value +0) -> Conv/FusedConv input 0  =>  conv with pads increased
// by the Pad's. A conv pads with +0 only: reflect mode, a non-zero value or -0 are refused.
#include <cmath>
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class PadConvFold final : public Rule {
 public:
  std::string_view name() const override { return "pad-conv-fold"; }
  std::string_view summary() const override {
    return "Pad(constant 0) -> Conv/FusedConv => conv with larger pads; mode constant; value "
           "exactly +0; Pad output has no other consumer and is not a graph output";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& conv = g.nodes[static_cast<size_t>(anchor)];
    if (!IsConvLike(conv.op)) return NoMatch("anchor is not a Conv or FusedConv");
    int p = ProducerOfInput(g, conv, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Pad) return NoMatch("conv input is not a Pad");
    const Node& pad = g.nodes[size_t(p)];
    if (AttrString(pad, "mode") != "constant") return NoMatch("Pad mode is not constant");
    const double v = AttrFloat(pad, "value");
    if (v != 0 || std::signbit(v)) return NoMatch("Pad value is not +0");
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

std::unique_ptr<Rule> MakePadConvFold() { return std::make_unique<PadConvFold>(); }

}  // namespace fusefuzz
