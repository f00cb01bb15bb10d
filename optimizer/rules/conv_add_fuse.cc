// conv-add-fuse: Add(conv_out, other) of two values  =>  FusedConv(x, other) whose epilogue ends
// with an add step of input 1. The fused node sits where the Add was, so `other` (produced
// anywhere before the Add) is defined before it. Existing epilogue steps keep their order and
// the add runs after them, as it did. Operand A is tried first, then B (Add commutes exactly).
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

struct Chosen {
  std::string other;
};

class ConvAddFuse final : public TypedRule<Chosen> {
 public:
  std::string_view name() const override { return "conv-add-fuse"; }
  std::string_view summary() const override {
    return "Add(Conv/FusedConv output, other value) => FusedConv with an add epilogue step; conv "
           "output has no other consumer, is not a graph output, is not both operands; the conv "
           "has no add input yet; other's shape broadcasts to the conv output unchanged";
  }

  RootOps roots() const override { return RootOps::Of({Op::Add}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& add = g.nodes[static_cast<size_t>(anchor)];
    BinaryOperands ops = GetBinaryOperands(add);
    if (ops.const_a || ops.const_b) return NoMatch("Add has a constant operand");
    if (add.inputs[0] == add.inputs[1]) return NoMatch("both Add operands are the same value");
    std::string reasons;
    for (size_t side = 0; side < 2; ++side) {
      std::string why = SideProblem(ctx, anchor, side);
      if (why.empty()) {
        return MakeMatch({ProducerOfInput(g, add, side), anchor}, Chosen{add.inputs[1 - side]});
      }
      reasons += (side == 0 ? "operand A: " : "; operand B: ") + why;
    }
    return NoMatch(reasons);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int conv = m.nodes[0], add = m.nodes[1];
    Node fused = rw.node(conv);
    fused.op = Op::FusedConv;
    fused.inputs = {fused.inputs[0], m.data.other};
    EpilogueStep step;
    step.kind = EpilogueKind::kAdd;
    step.input = 1;
    fused.epilogue.push_back(std::move(step));
    fused.output = rw.node(add).output;
    rw.ReplaceNode(add, std::move(fused));
    rw.EraseNode(conv);
  }

 private:
  static std::string SideProblem(const MatchContext& ctx, int anchor, size_t side) {
    const Graph& g = ctx.graph();
    const Node& add = g.nodes[static_cast<size_t>(anchor)];
    int p = ProducerOfInput(g, add, side);
    if (p < 0 || !IsConvLike(g.nodes[size_t(p)].op)) return "not produced by a Conv or FusedConv";
    const Node& conv = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, conv.output, anchor); !why.empty()) return why;
    if (conv.inputs.size() > 1) return "the FusedConv already has an add input";
    const ShapeMap& shapes = ctx.shapes();
    const Shape& out = shapes.at(conv.output);
    const Shape& other = shapes.at(add.inputs[1 - side]);
    Shape b;
    if (!BroadcastShapes(out, other, &b) || b != out) {
      return "other operand " + ShapeToString(other) + " does not broadcast to the conv output " +
             ShapeToString(out) + " unchanged";
    }
    return "";
  }
};

}  // namespace

std::unique_ptr<Rule> MakeConvAddFuse() { return std::make_unique<ConvAddFuse>(); }

}  // namespace fusefuzz
