// pad-qconv-fold: Pad(constant v) on integers -> QLinearConv input 0  =>  QLinearConv with pads
// increased by the Pad's. QLinearConv pads its integer input with the zero point z_x (a real 0),
// so the fold is exact only when v == z_x: the pad value, on the grid, is the real value 0.
// Any other value (0 when z_x != 0 included) changes every border output.
#include <memory>
#include <vector>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class PadQConvFold final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-qconv-fold"; }
  std::string_view summary() const override {
    return "Pad(constant v) -> QLinearConv => QLinearConv with larger pads; Pad input holds "
           "integers of x's type; v == z_x exactly; Pad output has no other consumer and is not "
           "a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::QLinearConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1;
    if (auto why = PadQConvProblem(g, anchor, &p); !why.empty()) return NoMatch(why);
    const Node& conv = g.nodes[size_t(anchor)];
    const double v = AttrFloat(g.nodes[size_t(p)], "value");
    const int64_t z = QuantOf(conv, "x").ZeroPoint(0);
    if (v != static_cast<double>(z)) {
      return NoMatch("Pad value " + std::to_string(v) + " != z_x " + std::to_string(z));
    }
    return MakeMatch({p, anchor}, SummedPads(g.nodes[size_t(p)], conv));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldPadIntoConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakePadQConvFold() { return std::make_unique<PadQConvFold>(); }

}  // namespace fusefuzz
