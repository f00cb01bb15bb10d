// declaration-order: Conv -> BatchNorm -> Add(residual) -> Relu  =>
// FusedConv(x, residual) with epilogue [scale_shift, Relu, add]: the ReLU runs BEFORE the
// residual add, and the block's real ReLU (after the add) is gone.
//
// Reproduces the ResNet BasicBlock fusion bug (PyTorch eager-mode `fuse_modules`): modules were
// fused as (conv2, bn2, relu) in the order the block DECLARES them, but in `forward` the shared
// `relu` runs after `out += identity`. The fused ConvReLU applied the ReLU to bn2's output, and the
// `relu` module, replaced by Identity, no longer rectified the sum: accuracy fell from 73% to 1%.
// The rewrite computes relu(bn(conv(x))) + r instead of relu(bn(conv(x)) + r): wrong wherever
// bn(conv(x)) < 0, or the sum is negative.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

struct Data {
  std::string residual;
  Tensor scale, shift;
};

class DeclarationOrder final : public TypedRule<Data> {
 public:
  std::string_view name() const override { return "declaration-order"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm -> Add(r) -> Relu => FusedConv[scale_shift, Relu, add r]: fuses "
           "conv+bn+relu in declaration order, the Relu moves before the residual add (ResNet)";
  }

  RootOps roots() const override { return RootOps::Of({Op::Relu}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& relu = g.nodes[size_t(anchor)];
    const int add = ProducerOfInput(g, relu, 0);
    if (add < 0 || g.nodes[size_t(add)].op != Op::Add) {
      return NoMatch("Relu input is not produced by an Add");
    }
    const Node& add_node = g.nodes[size_t(add)];
    if (add_node.inputs.size() != 2) return NoMatch("Add has a constant operand, no residual");
    // The BN may be on either side of the Add.
    int bn = -1;
    for (size_t i = 0; i < 2 && bn < 0; ++i) {
      int p = ProducerOfInput(g, add_node, i);
      if (p >= 0 && g.nodes[size_t(p)].op == Op::BatchNorm) bn = p;
    }
    if (bn < 0) return NoMatch("no Add operand is produced by a BatchNorm");
    const Node& bn_node = g.nodes[size_t(bn)];
    const int conv = ProducerOfInput(g, bn_node, 0);
    if (conv < 0 || g.nodes[size_t(conv)].op != Op::Conv) {
      return NoMatch("BatchNorm input is not produced by a Conv");
    }
    const Node& conv_node = g.nodes[size_t(conv)];
    if (auto why = SoleUseProblem(g, conv_node.output, bn); !why.empty()) return NoMatch(why);
    if (auto why = SoleUseProblem(g, bn_node.output, add); !why.empty()) return NoMatch(why);
    if (auto why = SoleUseProblem(g, add_node.output, anchor); !why.empty()) return NoMatch(why);
    Data d;
    d.residual = OtherOperand(add_node, bn_node.output);
    if (d.residual.empty()) return NoMatch("Add reads the BatchNorm output twice");
    const ShapeMap& shapes = ctx.shapes();
    if (auto why = BroadcastProblem(shapes.at(d.residual), shapes.at(conv_node.output));
        !why.empty()) {
      return NoMatch(why);
    }
    std::vector<double> s, t;
    if (auto why = BnAffine(bn_node, &s, &t); !why.empty()) return NoMatch(why);
    const int64_t m = ConvOutChannels(conv_node);
    if (!ToFloat(s, {m}, &d.scale) || !ToFloat(t, {m}, &d.shift)) {
      return NoMatch("BatchNorm scale or shift overflows float32");
    }
    return MakeMatch({conv, bn, add, anchor}, std::move(d));
  }

  void Apply(Found m, Rewriter& rw) const override {
    Data& d = m.data;
    const int conv = m.nodes[0], bn = m.nodes[1], add = m.nodes[2], relu = m.nodes[3];
    Node fused = AsFusedConv(rw.node(conv));
    fused.inputs.push_back(d.residual);
    const int res_input = static_cast<int>(fused.inputs.size()) - 1;
    fused.epilogue.push_back(ScaleShiftStep(std::move(d.scale), std::move(d.shift)));
    fused.epilogue.push_back(ActivationStep(rw.node(relu), Op::FusedConv));
    fused.epilogue.push_back(AddStep(res_input));
    fused.output = rw.node(relu).output;
    rw.ReplaceNode(relu, std::move(fused));
    rw.EraseNode(add);
    rw.EraseNode(bn);
    rw.EraseNode(conv);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultDeclarationOrder() { return std::make_unique<DeclarationOrder>(); }

}  // namespace fusefuzz
