// gemm-bn-fold: Gemm -> BatchNorm (BatchNorm1d on the [M, N] output, channel = column)  =>  Gemm
// with B' = B * s[j] (column j of B, or row j when transB) and C' = beta * C * s + t, beta = 1,
// s = gamma / sqrt(var + eps), t = beta_bn - mean * s. PyTorch's Linear -> BatchNorm1d.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/gemm_fold.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class GemmBnFold final : public TypedRule<GemmFolded> {
 public:
  std::string_view name() const override { return "gemm-bn-fold"; }
  std::string_view summary() const override {
    return "Gemm -> BatchNorm => Gemm with scaled weights and bias; Gemm without epilogue, its "
           "output has no other consumer and is not a graph output; folded values finite";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& bn = g.nodes[static_cast<size_t>(anchor)];
    const int p = ProducerOfInput(g, bn, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Gemm) {
      return NoMatch("BatchNorm input is not produced by a Gemm");
    }
    const Node& gemm = g.nodes[size_t(p)];
    // An activation epilogue sits between the product and the BN: BN(act(y)) != act(BN'(y)).
    if (!gemm.epilogue.empty()) return NoMatch("the Gemm has an epilogue (activation) already");
    if (auto why = SoleUseProblem(g, gemm.output, anchor); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(bn, &s, &t); !why.empty()) return NoMatch(why);
    const ShapeMap shapes = ValueShapes(g);
    const int64_t m = shapes.at(gemm.output)[0];
    GemmFolded f;
    if (auto why = FoldColumnAffineIntoGemm(gemm, m, s, t, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({p, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceByFoldedGemm(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeGemmBnFold() { return std::make_unique<GemmBnFold>(); }

}  // namespace fusefuzz
