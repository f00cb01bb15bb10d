// pad-conv-fold: Pad(constant, value +0) -> Conv/FusedConv input 0  =>  conv with pads increased
// by the Pad's. A conv pads with +0 only: reflect mode, a non-zero value or -0 are refused.
#include <cmath>
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class PadConvFold final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-conv-fold"; }
  std::string_view summary() const override {
    return "Pad(constant 0) -> Conv/FusedConv => conv with larger pads; mode constant; value "
           "exactly +0; Pad output has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::Conv, Op::FusedConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = PadConvProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    const Node& pad = g.nodes[size_t(p)];
    if (AttrString(pad, "mode") != "constant") return NoMatch("Pad mode is not constant");
    const double v = AttrFloat(pad, "value");
    if (v != 0 || std::signbit(v)) return NoMatch("Pad value is not +0");
    return MakeMatch({p, anchor}, SummedPads(pad, g.nodes[size_t(anchor)]));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldPadIntoConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakePadConvFold() { return std::make_unique<PadConvFold>(); }

}  // namespace fusefuzz
