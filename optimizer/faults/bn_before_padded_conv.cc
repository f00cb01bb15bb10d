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

class BnBeforePaddedConv final : public Rule {
 public:
  std::string_view name() const override { return "bn-before-padded-conv"; }
  std::string_view summary() const override {
    return "BatchNorm -> Conv => conv with input-channel-scaled weights and shifted bias, "
           "ignoring the conv's zero padding; wrong at the borders when a BN shift != 0";
  }

  MatchResult Match(const Graph& g, int anchor) const override {
    const Node& conv = g.nodes[size_t(anchor)];
    if (!IsConvLike(conv.op)) return NoMatch("anchor is not a Conv or FusedConv");
    const int bn = ProducerOfInput(g, conv, 0);
    if (bn < 0 || g.nodes[size_t(bn)].op != Op::BatchNorm) {
      return NoMatch("conv input is not produced by a BatchNorm");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(bn)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(g.nodes[size_t(bn)], &s, &t); !why.empty()) return NoMatch(why);
    // The fold of bn-conv-fold, without its "conv has zero pads" legality check.
    const Tensor& w = *FindParam(conv, "W");
    const int64_t m = w.shape[0], cg = w.shape[1], khw = w.shape[2] * w.shape[3];
    const int64_t m_per_group = m / GetConvAttrs(conv).group;
    std::vector<double> b = ParamAsDouble(conv, "B");
    if (b.empty()) b.assign(size_t(m), 0.0);
    std::vector<double> w2(w.data.size());
    for (int64_t o = 0; o < m; ++o) {
      const int64_t grp = o / m_per_group;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const size_t c = size_t(grp * cg + ci);
        for (int64_t k = 0; k < khw; ++k) {
          const size_t idx = size_t((o * cg + ci) * khw + k);
          w2[idx] = double(w.data[idx]) * s[c];
          b[size_t(o)] += double(w.data[idx]) * t[c];
        }
      }
    }
    FoldedParams f;
    if (!ToFloat(w2, w.shape, &f.w) || !ToFloat(b, {m}, &f.b)) {
      return NoMatch("folded weights or bias overflow float32");
    }
    return MakeMatch({bn, anchor}, std::move(f));
  }

  void Apply(RuleMatch m, Rewriter& rw) const override {
    FoldedParams& f = MatchData<FoldedParams>(m);
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

std::unique_ptr<Rule> MakeFaultBnBeforePaddedConv() {
  return std::make_unique<BnBeforePaddedConv>();
}

}  // namespace fusefuzz
