// through-activation: Conv -> Relu -> BatchNorm  =>  Conv' -> Relu, the BN folded into the conv
// weights ACROSS the Relu.
//
// Reproduces Glow's bug: after lowering, Glow's ReLU was `max(0, conv)`, and its conv-BN fold
// looked through that node and folded the BatchNorm into the convolution anyway, computing
// relu(s * conv + t) instead of s * relu(conv) + t (users could not even find a flag to turn the
// fold off). Wrong wherever a channel has a shift t = beta - mean * s != 0 or a negative scale s,
// at elements where the conv output (or s * conv + t) is negative.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class ThroughActivation final : public TypedRule<FoldedParams> {
 public:
  std::string_view name() const override { return "through-activation"; }
  std::string_view summary() const override {
    return "Conv -> Relu -> BatchNorm => Conv(BN folded) -> Relu: folds the BN across the Relu "
           "(Glow); wrong when a BN shift != 0 or scale < 0";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& bn = g.nodes[size_t(anchor)];
    const int relu = ProducerOfInput(g, bn, 0);
    if (relu < 0 || g.nodes[size_t(relu)].op != Op::Relu) {
      return NoMatch("BatchNorm input is not produced by a Relu");
    }
    const int conv = ProducerOfInput(g, g.nodes[size_t(relu)], 0);
    if (conv < 0 || g.nodes[size_t(conv)].op != Op::Conv) {
      return NoMatch("Relu input is not produced by a Conv");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(conv)].output, relu); !why.empty()) {
      return NoMatch(why);
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(relu)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(bn, &s, &t); !why.empty()) return NoMatch(why);
    FoldedParams f;
    if (auto why = FoldAffineIntoConv(g.nodes[size_t(conv)], s, t, {}, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({conv, relu, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldedParams& f = m.data;
    const int conv = m.nodes[0], relu = m.nodes[1], bn = m.nodes[2];
    rw.SetParam(conv, "W", std::move(f.w));
    rw.SetParam(conv, "B", std::move(f.b));
    // The Relu moves to the BN's place and output; it now reads the folded conv directly.
    Node act = rw.node(relu);
    act.output = rw.node(bn).output;
    rw.ReplaceNode(bn, std::move(act));
    rw.EraseNode(relu);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultThroughActivation() { return std::make_unique<ThroughActivation>(); }

}  // namespace fusefuzz
