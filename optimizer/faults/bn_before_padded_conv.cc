// bn-before-padded-conv: BatchNorm -> Conv folded into the conv (weights scaled per input
// channel, the shift summed into the bias) even when the conv pads its input with zeros.
//
// Reproduces the padding-semantics bug of "fold BN into the FOLLOWING conv" passes: the zeros a
// padded conv reads were zeros AFTER the BatchNorm, but the folded bias adds
// sum(W * t) as if every tap had read an input of BN(x) including the pad taps, which would have
// been t[c], not 0. Wrong only at output elements whose window touches the padding, and only
// when a channel has a shift t = beta - mean * s != 0.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class BnBeforePaddedConv final : public TypedRule<FoldedParams> {
 public:
  std::string_view name() const override { return "bn-before-padded-conv"; }
  std::string_view summary() const override {
    return "BatchNorm -> Conv => conv with input-channel-scaled weights and shifted bias, "
           "ignoring the conv's zero padding; wrong at the borders when a BN shift != 0";
  }

  // bn-conv-fold without its "conv has zero pads" legality check.
  RootOps roots() const override { return RootOps::Of({Op::Conv, Op::FusedConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int bn = -1;
    if (auto why = BnConvProblem(g, anchor, &bn); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(bn)], &s, &t); !why.empty()) return NoMatch(why);
    FoldedParams f;
    if (auto why = FoldBnIntoConv(g.nodes[size_t(anchor)], s, t, &f.w, &f.b); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({bn, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldedParams& f = m.data;
    ReplaceBnConvByFolded(rw, m.nodes[0], m.nodes[1], std::move(f.w), std::move(f.b));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultBnBeforePaddedConv() {
  return std::make_unique<BnBeforePaddedConv>();
}

}  // namespace fusefuzz
