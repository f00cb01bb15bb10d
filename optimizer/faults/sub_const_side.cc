// sub-const-side: conv-shift-fold that folds c - conv as if it were conv - c: Sub with the
// constant as its LEFT operand becomes a conv with bias B - c.
//
// Reproduces the operand-order bug of constant folds that assume the constant of a binary op is
// its second operand (seen in converters' Sub/Div fusions: `c - x` treated as `x - c`, `c / x`
// as `x / c`). Right whenever the constant is on the right, which is how most frameworks emit
// it; wrong for a constant on the left, where the true result is the negated conv plus c.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class SubConstSide final : public TypedRule<Tensor> {
 public:
  std::string_view name() const override { return "sub-const-side"; }
  std::string_view summary() const override {
    return "Conv -> Sub with a scalar/per-channel constant on either side => Conv with bias "
           "B - c, as if the constant were the subtrahend; wrong for c - conv";
  }

  RootOps roots() const override { return RootOps::Of({Op::Sub}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    ConvConstBinary cb;
    if (auto why = ConvConstBinaryProblem(g, anchor, &cb); !why.empty()) return NoMatch(why);
    // conv-shift-fold's Sub, without its "constant - conv is not a shift" check.
    return ConvBiasShiftMatch(g, anchor, cb, -1.0);
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceBinaryByBiasedConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultSubConstSide() { return std::make_unique<SubConstSide>(); }

}  // namespace fusefuzz
