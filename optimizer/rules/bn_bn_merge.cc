// bn-bn-merge: BatchNorm1 -> BatchNorm2  =>  one BatchNorm with scale = s1*s2,
// bias = t1*s2 + t2, mean = 0, var = 1, epsilon = 0 (so its own s is exactly scale).
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

struct Merged {
  Tensor scale, bias;
};

class BnBnMerge final : public TypedRule<Merged> {
 public:
  std::string_view name() const override { return "bn-bn-merge"; }
  std::string_view summary() const override {
    return "BatchNorm -> BatchNorm => one BatchNorm (mean 0, var 1, eps 0); first BN output has "
           "no other consumer and is not a graph output; var + eps > 0 in both; merged values "
           "finite in float32";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& bn2 = g.nodes[static_cast<size_t>(anchor)];
    int p = ProducerOfInput(g, bn2, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::BatchNorm) {
      return NoMatch("BatchNorm input is not produced by a BatchNorm");
    }
    const Node& bn1 = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, bn1.output, anchor); !why.empty()) return NoMatch(why);
    std::vector<double> s1, t1, s2, t2;
    if (auto why = BnAffine(bn1, &s1, &t1); !why.empty()) return NoMatch(why);
    if (auto why = BnAffine(bn2, &s2, &t2); !why.empty()) return NoMatch(why);
    std::vector<double> s(s1.size()), t(s1.size());
    for (size_t c = 0; c < s1.size(); ++c) {
      s[c] = s1[c] * s2[c];
      t[c] = t1[c] * s2[c] + t2[c];
    }
    const int64_t ch = static_cast<int64_t>(s.size());
    Merged mg;
    if (!ToFloat(s, {ch}, &mg.scale) || !ToFloat(t, {ch}, &mg.bias)) {
      return NoMatch("merged scale or bias overflows float32");
    }
    return MakeMatch({p, anchor}, std::move(mg));
  }

  void Apply(Found m, Rewriter& rw) const override {
    Merged& mg = m.data;
    const int bn1 = m.nodes[0], bn2 = m.nodes[1];
    const int64_t ch = mg.scale.size();
    Node merged = rw.node(bn1);
    merged.output = rw.node(bn2).output;
    merged.attrs["epsilon"] = 0.0;
    merged.params["scale"] = std::move(mg.scale);
    merged.params["bias"] = std::move(mg.bias);
    merged.params["mean"] = Tensor({ch}, 0.0f);
    merged.params["var"] = Tensor({ch}, 1.0f);
    rw.ReplaceNode(bn2, std::move(merged));
    rw.EraseNode(bn1);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeBnBnMerge() { return std::make_unique<BnBnMerge>(); }

}  // namespace fusefuzz
