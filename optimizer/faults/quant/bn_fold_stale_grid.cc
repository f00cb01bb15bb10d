// bn-fold-stale-grid: qdq-conv-bn-fold re-rounding W * s onto the OLD weight grid instead of
// re-snapping the scale. Paddle #31103: BatchNorm was folded after the weights had been
// quantized, without re-rounding them to a grid fitted to the folded weights; each folded weight
// moves by up to half an old step, which is a large relative error where |s| is small.
// Visible when some |s[m]| is far from 1.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class BnFoldStaleGrid final : public TypedRule<QBnFolded> {
 public:
  std::string_view name() const override { return "bn-fold-stale-grid"; }
  std::string_view summary() const override {
    return "Paddle #31103: Conv(W on an int8 grid) -> BN => Conv with W*s rounded onto the old "
           "grid s_w; wrong (by up to half an old step per weight) where |s| != 1";
  }
  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int conv = -1;
    if (auto why = QConvBnProblem(g, anchor, &conv); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(anchor)], &s, &t); !why.empty()) return NoMatch(why);
    QBnFolded f;
    if (auto why = FoldBnResnapped(g, conv, s, t, Resnap::kStaleGrid, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({conv, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceBnByResnappedConv(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultBnFoldStaleGrid() { return std::make_unique<BnFoldStaleGrid>(); }

}  // namespace fusefuzz
