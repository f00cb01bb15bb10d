// relu6-unbounded: conv-activation-fuse that turns a bounded activation into an unbounded one:
// Conv -> Relu6 becomes FusedConv[..., Relu], Conv -> Clip(lo, hi) becomes
// FusedConv[..., clamp(lo, FLT_MAX)].
//
// Reproduces the ReLU6 fusion bug of mobile converters that mapped Relu6 / Clip onto a fused
// "relu" or "clip with min only" epilogue (the fused kernel had no upper bound), which
// silently broke MobileNet-style networks. Wrong exactly at elements where the conv output
// exceeds 6 (or the Clip's max).
#include <limits>
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class Relu6Unbounded final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "relu6-unbounded"; }
  std::string_view summary() const override {
    return "Conv/FusedConv -> Relu6 or Clip => FusedConv[..., Relu or clamp(min, FLT_MAX)]: the "
           "upper bound is lost; wrong where the conv output exceeds 6 (or max)";
  }

  RootOps roots() const override { return RootOps::Of({Op::Relu6, Op::Clip}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& act = g.nodes[size_t(anchor)];
    const int conv = ProducerOfInput(g, act, 0);
    if (conv < 0 || !IsConvLike(g.nodes[size_t(conv)].op)) {
      return NoMatch("activation input is not produced by a Conv or FusedConv");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(conv)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({conv, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int conv = m.nodes[0], act = m.nodes[1];
    const Node& a = rw.node(act);
    Node fused = AsFusedConv(rw.node(conv));
    EpilogueStep step;
    if (a.op == Op::Relu6) {
      step.kind = EpilogueKind::kActivation;
      step.act = Op::Relu;
    } else {
      step.kind = EpilogueKind::kClamp;
      step.attrs["min"] = AttrFloat(a, "min");
      step.attrs["max"] = static_cast<double>(std::numeric_limits<float>::max());
    }
    fused.epilogue.push_back(std::move(step));
    fused.output = a.output;
    rw.ReplaceNode(act, std::move(fused));
    rw.EraseNode(conv);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultRelu6Unbounded() { return std::make_unique<Relu6Unbounded>(); }

}  // namespace fusefuzz
