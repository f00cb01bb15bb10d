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

class BnConvFold final : public Rule {
 public:
  std::string_view name() const override { return "bn-conv-fold"; }
  std::string_view summary() const override {
    return "BatchNorm -> Conv/FusedConv => conv with input-channel-scaled weights and bias; conv "
           "has zero pads; BN output has no other consumer and is not a graph output; var + eps "
           "> 0; folded values finite in float32";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& conv = g.nodes[static_cast<size_t>(anchor)];
    if (!IsConvLike(conv.op)) return NoMatch("anchor is not a Conv or FusedConv");
    int p = ProducerOfInput(g, conv, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::BatchNorm) {
      return NoMatch("conv input is not produced by a BatchNorm");
    }
    const Node& bn = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, bn.output, anchor); !why.empty()) return NoMatch(why);
    ConvAttrs a = GetConvAttrs(conv);
    if (a.pad_top || a.pad_left || a.pad_bottom || a.pad_right) {
      return NoMatch("conv is padded: its zero padding would not see the BatchNorm shift");
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(bn, &s, &t); !why.empty()) return NoMatch(why);
    const Tensor& w = *FindParam(conv, "W");
    const int64_t m = w.shape[0], cg = w.shape[1], khw = w.shape[2] * w.shape[3];
    const int64_t m_per_group = m / a.group;
    std::vector<double> b = ParamAsDouble(conv, "B");
    if (b.empty()) b.assign(size_t(m), 0.0);
    std::vector<double> w2(w.data.size());
    for (int64_t o = 0; o < m; ++o) {
      const int64_t grp = o / m_per_group;
      double shift = 0;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const size_t c = size_t(grp * cg + ci);
        for (int64_t k = 0; k < khw; ++k) {
          const size_t idx = size_t((o * cg + ci) * khw + k);
          w2[idx] = double(w.data[idx]) * s[c];
          shift += double(w.data[idx]) * t[c];
        }
      }
      b[size_t(o)] += shift;
    }
    Folded f;
    if (!ToFloat(w2, w.shape, &f.w) || !ToFloat(b, {m}, &f.b)) {
      return NoMatch("folded weights or bias overflow float32");
    }
    return MakeMatch({p, anchor}, std::move(f));
  }

  void Apply(RuleMatch m, Rewriter& rw) const override {
    Folded& f = MatchData<Folded>(m);
    const int bn = m.nodes[0], conv = m.nodes[1];
    Node fused = rw.node(conv);
    fused.params["W"] = std::move(f.w);
    fused.params["B"] = std::move(f.b);
    fused.inputs[0] = rw.node(bn).inputs[0];
    rw.ReplaceNode(conv, std::move(fused));
    rw.EraseNode(bn);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeBnConvFold() { return std::make_unique<BnConvFold>(); }

}  // namespace fusefuzz
