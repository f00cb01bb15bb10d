// bn-bn-half-fold: Conv -> BN1 -> BN2  =>  Conv' -> BN1, with BN2 folded into the conv as if it
// followed the conv directly.
//
// Reproduces the Conv -> BN -> BN bug: the folding stage handled only one BatchNorm next to the
// conv and the second was then mishandled by the next stage, which folded it into the conv
// weights without composing it with the first. Scales are per channel and commute, so the
// weights come out right; the shifts do not: the result is s1*s2*conv + s1*t2 + t1 instead of
// s1*s2*conv + s2*t1 + t2. Wrong when (s2 - 1) * t1 != (s1 - 1) * t2 for some channel, i.e.
// whenever the BNs have non-trivial scales and shifts.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class BnBnHalfFold final : public TypedRule<FoldedParams> {
 public:
  std::string_view name() const override { return "bn-bn-half-fold"; }
  std::string_view summary() const override {
    return "Conv -> BN1 -> BN2 => Conv(BN2 folded) -> BN1: the second BN folded into the conv "
           "without composing with the first; shifts wrong unless (s2-1)*t1 == (s1-1)*t2";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& bn2 = g.nodes[size_t(anchor)];
    const int bn1 = ProducerOfInput(g, bn2, 0);
    if (bn1 < 0 || g.nodes[size_t(bn1)].op != Op::BatchNorm) {
      return NoMatch("BatchNorm input is not produced by a BatchNorm");
    }
    ConvBnNodes cb;
    if (auto why = ConvBnProblem(g, bn1, true, &cb); !why.empty()) return NoMatch(why);
    if (auto why = SoleUseProblem(g, g.nodes[size_t(bn1)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(bn2, &s, &t); !why.empty()) return NoMatch(why);
    FoldedParams f;
    if (auto why = FoldAffineIntoConv(g.nodes[size_t(cb.conv)], s, t, {}, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({cb.conv, bn1, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldedParams& f = m.data;
    const int conv = m.nodes[0], bn1 = m.nodes[1], bn2 = m.nodes[2];
    rw.SetParam(conv, "W", std::move(f.w));
    rw.SetParam(conv, "B", std::move(f.b));
    // BN1 moves to BN2's place and output (it still reads the conv).
    Node first = rw.node(bn1);
    first.output = rw.node(bn2).output;
    rw.ReplaceNode(bn2, std::move(first));
    rw.EraseNode(bn1);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultBnBnHalfFold() { return std::make_unique<BnBnHalfFold>(); }

}  // namespace fusefuzz
