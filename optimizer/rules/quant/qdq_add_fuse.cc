// qdq-add-fuse: DQ(a), DQ(b) -> Add [-> Relu] -> Q  =>  QLinearAdd (activation "none" or
// "relu"), whose reference is exactly Q(relu?(DQ(a) + DQ(b))) with the Q's own parameters: the
// sum is requantized to y, never narrowed to a or b's grid. The operands must have equal shapes
// (QLinearAdd does not broadcast) and hold integers; the Add and Relu outputs have no other use.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QdqAddFuse final : public TypedRule<QAddParts> {
 public:
  std::string_view name() const override { return "qdq-add-fuse"; }
  std::string_view summary() const override {
    return "DQ(a), DQ(b) -> Add [-> Relu] -> Q => QLinearAdd; DQ inputs hold integers of their "
           "types; a, b, y 8-bit per tensor, scale > 0; equal operand shapes; Add and Relu "
           "outputs have no other consumer and are not graph outputs";
  }

  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QAddParts parts;
    if (auto why = QAddChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    const Node& add = g.nodes[size_t(parts.add)];
    if (ctx.shapes().at(add.inputs[0]) != ctx.shapes().at(add.inputs[1])) {
      return NoMatch("Add operands have different shapes (QLinearAdd does not broadcast)");
    }
    std::vector<int> nodes = {parts.add};
    if (parts.relu >= 0) nodes.push_back(parts.relu);
    nodes.push_back(anchor);
    return MakeMatch(std::move(nodes), parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    Node fused = MakeQLinearAdd(rw.graph(), m.data, anchor, QuantOf(rw.node(anchor), "y"));
    ReplaceChainByQAdd(rw, m.data, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQdqAddFuse() { return std::make_unique<QdqAddFuse>(); }

}  // namespace fusefuzz
