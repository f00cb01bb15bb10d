// multi-consumer: Conv -> BatchNorm folded into the conv although the conv output has another
// consumer (or is a graph output); the conv's weights are rewritten in place, so that consumer
// now reads the BatchNorm-ed values.
//
// Reproduces the classic fusion legality bug of checking the producer-consumer edge but not the
// producer's other uses (fixed in several converters by a "single consumer" check). Wrong
// exactly when the conv output has a second consumer or is a graph output, and the BN is not the
// identity (s != 1 or t != 0).
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class MultiConsumer final : public TypedRule<FoldedParams> {
 public:
  std::string_view name() const override { return "multi-consumer"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm where the conv output has another consumer or is a graph output "
           "=> BN folded into the conv in place: the other consumer sees BN-ed values";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    ConvBnNodes cb;
    if (auto why = ConvBnProblem(g, anchor, false, &cb); !why.empty()) return NoMatch(why);
    const Node& conv = g.nodes[size_t(cb.conv)];
    const Node& bn = g.nodes[size_t(anchor)];
    if (SoleUseProblem(g, conv.output, anchor).empty()) {
      return NoMatch("conv output has no other consumer (conv-bn-fold's case, folded correctly)");
    }
    if (conv.output == bn.output) return NoMatch("BatchNorm writes its own input");
    std::vector<double> s, t;
    if (auto why = BnAffine(bn, &s, &t); !why.empty()) return NoMatch(why);
    FoldedParams f;
    if (auto why = FoldAffineIntoConv(conv, s, t, {}, &f); !why.empty()) return NoMatch(why);
    return MakeMatch({cb.conv, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    FoldedParams& f = m.data;
    const int conv = m.nodes[0], bn = m.nodes[1];
    rw.SetParam(conv, "W", std::move(f.w));
    rw.SetParam(conv, "B", std::move(f.b));
    const std::string conv_out = rw.node(conv).output;
    const std::string bn_out = rw.node(bn).output;
    if (rw.graph().IsGraphOutput(bn_out)) {
      // Graph output names are the graph's interface: keep the value, as a copy.
      Node copy;
      copy.name = rw.node(bn).name;
      copy.op = Op::Identity;
      copy.inputs = {conv_out};
      copy.output = bn_out;
      rw.ReplaceNode(bn, std::move(copy));
    } else {
      rw.ReplaceAllUsesWith(bn_out, conv_out);
      rw.EraseNode(bn);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultMultiConsumer() { return std::make_unique<MultiConsumer>(); }

}  // namespace fusefuzz
