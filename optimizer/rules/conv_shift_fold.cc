// conv-shift-fold: Conv -> Add of a per-channel or scalar constant (either side), or Sub of one
// (conv - c, constant as subtrahend B only)  =>  Conv with B' = B + c[m] (or B - c[m]); a conv
// without bias gets one. c - conv negates the conv: not a shift, refused.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class ConvShiftFold final : public TypedRule<Tensor> {
 public:
  std::string_view name() const override { return "conv-shift-fold"; }
  std::string_view summary() const override {
    return "Conv -> Add(const) / Sub(const as B) => Conv with shifted bias; constant is scalar or "
           "per-channel ([1,M,1,1], [M,1,1]; not [M]); c - conv refused; conv output has no "
           "other consumer and is not a graph output; bias finite";
  }

  RootOps roots() const override { return RootOps::Of({Op::Add, Op::Sub}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& n = g.nodes[static_cast<size_t>(anchor)];
    ConvConstBinary cb;
    if (auto why = ConvConstBinaryProblem(g, anchor, &cb); !why.empty()) return NoMatch(why);
    const bool sub = n.op == Op::Sub;
    if (sub && !cb.constant_is_b) return NoMatch("constant - conv negates the conv: not a shift");
    return ConvBiasShiftMatch(g, anchor, cb, sub ? -1.0 : 1.0);
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceBinaryByBiasedConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeConvShiftFold() { return std::make_unique<ConvShiftFold>(); }

}  // namespace fusefuzz
