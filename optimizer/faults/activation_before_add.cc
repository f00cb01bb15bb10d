// activation-before-add: Conv -> Act -> Add(r), or FusedConv[..., Act] -> Add(r), fused with the
// residual add placed BEFORE the activation: FusedConv[..., add r, Act], i.e. act(conv + r)
// instead of act(conv) + r.
//
// Reproduces conv-add-fuse bugs that append the residual add and the activation in a fixed
// order ("conv, sum, relu", oneDNN's usual post-op chain) whatever the graph's order was: right
// for Conv -> Add -> Relu, wrong for blocks that activate the branch before adding it (pre-
// activation / "x + relu(conv(x))" shortcuts, a FusedConv that already carries its activation).
// Wrong wherever the activation is nonlinear on conv vs conv + r (for Relu: where conv < 0 or
// conv + r < 0, with r != 0).
#include <memory>

#include "ir/broadcast.h"
#include "ir/verifier.h"
#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

struct Data {
  std::string residual;
  bool separate_act = false;  // Conv -> Act -> Add (else FusedConv[..., Act] -> Add)
};

bool IsActStep(const EpilogueStep& s) {
  return s.kind == EpilogueKind::kActivation || s.kind == EpilogueKind::kClamp;
}

class ActivationBeforeAdd final : public TypedRule<Data> {
 public:
  std::string_view name() const override { return "activation-before-add"; }
  std::string_view summary() const override {
    return "Conv -> Act -> Add(r) (or FusedConv[.., Act] -> Add(r)) => FusedConv[.., add r, Act]: "
           "the add is fused before the activation that preceded it";
  }

  RootOps roots() const override { return RootOps::Of({Op::Add}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& add = g.nodes[size_t(anchor)];
    if (add.inputs.size() != 2) return NoMatch("Add has a constant operand, no residual");
    for (size_t side = 0; side < 2; ++side) {
      const int p = ProducerOfInput(g, add, side);
      if (p < 0) continue;
      const Node& pn = g.nodes[size_t(p)];
      std::vector<int> nodes;
      Data d;
      if (IsActivation(pn.op)) {
        const int conv = ProducerOfInput(g, pn, 0);
        if (conv < 0 || !IsConvLike(g.nodes[size_t(conv)].op)) continue;
        if (!SoleUseProblem(g, g.nodes[size_t(conv)].output, p).empty()) continue;
        // A slope along H or W cannot be an epilogue step.
        if (pn.op == Op::PRelu &&
            !AsPerChannelSlope(pn.params.at("slope").shape, ctx.shapes().at(pn.inputs[0]))) {
          continue;
        }
        nodes = {conv, p, anchor};
        d.separate_act = true;
      } else if (pn.op == Op::FusedConv && !pn.epilogue.empty() && IsActStep(pn.epilogue.back())) {
        nodes = {p, anchor};
      } else {
        continue;
      }
      if (!SoleUseProblem(g, pn.output, anchor).empty()) continue;
      // FusedConv takes at most one add operand.
      if (g.nodes[size_t(nodes[0])].inputs.size() > 1) continue;
      d.residual = OtherOperand(add, pn.output);
      if (d.residual.empty()) continue;
      const ShapeMap& shapes = ctx.shapes();
      const Node& conv = g.nodes[size_t(nodes[0])];
      if (!BroadcastProblem(shapes.at(d.residual), shapes.at(conv.output)).empty()) continue;
      return MakeMatch(std::move(nodes), std::move(d));
    }
    return NoMatch("no Add operand is an activated conv used only by the Add");
  }

  void Apply(Found m, Rewriter& rw) const override {
    Data& d = m.data;
    const int conv = m.nodes[0], add = m.nodes.back();
    Node fused = AsFusedConv(rw.node(conv));
    EpilogueStep act_step;
    if (d.separate_act) {
      act_step = ActivationStep(rw.node(m.nodes[1]), Op::FusedConv);
    } else {
      act_step = std::move(fused.epilogue.back());
      fused.epilogue.pop_back();
    }
    fused.inputs.push_back(d.residual);
    fused.epilogue.push_back(AddStep(static_cast<int>(fused.inputs.size()) - 1));
    fused.epilogue.push_back(std::move(act_step));
    fused.output = rw.node(add).output;
    rw.ReplaceNode(add, std::move(fused));
    if (d.separate_act) rw.EraseNode(m.nodes[1]);
    rw.EraseNode(conv);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultActivationBeforeAdd() {
  return std::make_unique<ActivationBeforeAdd>();
}

}  // namespace fusefuzz
