// bn-conv-fold: BatchNorm -> Conv  =>  Conv reading the BN input, with
// W'[m,c',k] = W[m,c',k] * s[c] and B'[m] = B[m] + sum_{c',k} W[m,c',k] * t[c], where BN is
// y = x * s[c] + t[c] and c = group(m) * C/group + c'. Exact only when the conv has no padding:
// a padded conv reads zeros that the BN would have turned into t[c]; such convs are refused.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

struct Folded {
  Tensor w, b;
};

class BnConvFold final : public TypedRule<Folded> {
 public:
  std::string_view name() const override { return "bn-conv-fold"; }
  std::string_view summary() const override {
    return "BatchNorm -> Conv/FusedConv => conv with input-channel-scaled weights and bias; conv "
           "has zero pads; BN output has no other consumer and is not a graph output; var + eps "
           "> 0; folded values finite in float32";
  }

  RootOps roots() const override { return RootOps::Of({Op::Conv, Op::FusedConv}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int bn = -1;
    if (auto why = BnConvProblem(g, anchor, &bn); !why.empty()) return NoMatch(why);
    const Node& conv = g.nodes[static_cast<size_t>(anchor)];
    ConvAttrs a = GetConvAttrs(conv);
    if (a.pad_top || a.pad_left || a.pad_bottom || a.pad_right) {
      return NoMatch("conv is padded: its zero padding would not see the BatchNorm shift");
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(bn)], &s, &t); !why.empty()) return NoMatch(why);
    Folded f;
    if (auto why = FoldBnIntoConv(conv, s, t, &f.w, &f.b); !why.empty()) return NoMatch(why);
    return MakeMatch({bn, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    Folded& f = m.data;
    ReplaceBnConvByFolded(rw, m.nodes[0], m.nodes[1], std::move(f.w), std::move(f.b));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeBnConvFold() { return std::make_unique<BnConvFold>(); }

}  // namespace fusefuzz
