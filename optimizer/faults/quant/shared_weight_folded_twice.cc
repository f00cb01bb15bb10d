// shared-weight-folded-twice: qdq-conv-bn-fold on a weight shared by two Conv -> BN chains,
// folding both BNs' scales into it. pytorch/ao #2795: a conv weight shared by two Conv -> BN
// chains was folded once per chain into the same tensor, so each conv carries s1 * s2. Here the
// weights are per node, and "shared" is another Conv with an identical declared weight whose
// output feeds a BN: this conv is folded with its own BN and the other's scale. Visible when the
// other BN's scale is not 1.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class SharedWeightFoldedTwice final : public TypedRule<QBnFolded> {
 public:
  std::string_view name() const override { return "shared-weight-folded-twice"; }
  std::string_view summary() const override {
    return "pytorch/ao #2795: Conv(W) -> BN with another Conv(same W) -> BN2 => the conv folded "
           "with s * s2; wrong when s2 != 1";
  }
  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int conv = -1;
    if (auto why = QConvBnProblem(g, anchor, &conv); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(anchor)], &s, &t); !why.empty()) return NoMatch(why);
    const Node& c = g.nodes[size_t(conv)];
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& other = g.nodes[i];
      if (int(i) == anchor || other.op != Op::BatchNorm) continue;
      int oc = -1;
      if (!QConvBnProblem(g, int(i), &oc).empty() || oc == conv) continue;
      const Node& o = g.nodes[size_t(oc)];
      if (o.params.at("W") != c.params.at("W") || o.quant.at("W") != c.quant.at("W")) continue;
      std::vector<double> s2, t2;
      if (!BnAffine(other, &s2, &t2).empty() || s2.size() != s.size()) continue;
      for (size_t k = 0; k < s.size(); ++k) s[k] *= s2[k];
      QBnFolded f;
      if (auto why = FoldBnResnapped(g, conv, s, t, Resnap::kScale, &f); !why.empty()) {
        return NoMatch(why);
      }
      return MakeMatch({conv, anchor}, std::move(f));
    }
    return NoMatch("no other Conv -> BN with the same weight");
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceBnByResnappedConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultSharedWeightFoldedTwice() {
  return std::make_unique<SharedWeightFoldedTwice>();
}

}  // namespace fusefuzz
