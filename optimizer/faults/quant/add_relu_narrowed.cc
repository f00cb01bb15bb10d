// add-relu-narrowed: qdq-add-fuse narrowing relu(add) to the first operand's grid. TVM #15529:
// an int32 relu(add) was cast back to int8 without requantization, i.e. on the input's scale and
// zero point instead of the output Q's. Written as a QLinearAdd whose y takes a's parameters.
// Visible when the Q's parameters differ from a's.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class AddReluNarrowed final : public TypedRule<QAddParts> {
 public:
  std::string_view name() const override { return "add-relu-narrowed"; }
  std::string_view summary() const override {
    return "TVM #15529: DQ(a), DQ(b) -> Add -> Relu -> Q => QLinearAdd on a's grid, not "
           "requantized to y; wrong when y's parameters differ from a's";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QAddParts parts;
    if (auto why = QAddChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    if (parts.relu < 0) return NoMatch("no Relu after the Add");
    const Node& add = g.nodes[size_t(parts.add)];
    if (ctx.shapes().at(add.inputs[0]) != ctx.shapes().at(add.inputs[1])) {
      return NoMatch("Add operands have different shapes");
    }
    return MakeMatch({parts.add, parts.relu, anchor}, parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    const QuantParams a = QuantOf(rw.node(m.data.dq_a), "x");
    Node fused = MakeQLinearAdd(rw.graph(), m.data, anchor, a);
    ReplaceChainByQAdd(rw, m.data, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultAddReluNarrowed() { return std::make_unique<AddReluNarrowed>(); }

}  // namespace fusefuzz
