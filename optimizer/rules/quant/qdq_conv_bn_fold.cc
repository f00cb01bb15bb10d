// qdq-conv-bn-fold: Conv (W declared on an int8 grid) -> BatchNorm  =>  Conv with the BN folded
// BEFORE weight quantization and re-snapped per channel: the weight keeps its integers (negated
// where s[m] < 0) on the new grid s_w'[m] = s_w[m] * |s[m]|, so W' = W * s up to one float32
// rounding; the bias B * s + t is re-rounded to the int32 grid s_x * s_w'[m] (half a bias step at
// most: what a QAT convert does, admitted by the grid oracle) when the conv reads a DQ. Each
// conv's weight is its own param here, so a weight is folded once per conv, never twice.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QdqConvBnFold final : public TypedRule<QBnFolded> {
 public:
  std::string_view name() const override { return "qdq-conv-bn-fold"; }
  std::string_view summary() const override {
    return "Conv(W on an int8 grid) -> BatchNorm => Conv with W' on the per-channel grid "
           "s_w*|s| (integers kept, negated for s < 0) and B' = B*s + t on the grid s_x*s_w' "
           "(conv reading a DQ); W grid int8, zero point 0; conv output has no other consumer "
           "and is not a graph output; var + eps > 0; s != 0; new scales normal float32";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int conv = -1;
    if (auto why = QConvBnProblem(g, anchor, &conv); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(anchor)], &s, &t); !why.empty()) return NoMatch(why);
    QBnFolded f;
    if (auto why = FoldBnResnapped(g, conv, s, t, Resnap::kScale, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({conv, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceBnByResnappedConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQdqConvBnFold() { return std::make_unique<QdqConvBnFold>(); }

}  // namespace fusefuzz
