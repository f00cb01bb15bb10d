// sum-saturate-early: qdq-add-fuse whose sum saturates 3 steps early. oneDNN #1870: the sum
// post-op saturated its result to 124 instead of 127 (an int8 range computed from a rounded
// float bound). Written as QLinearAdd followed by a clamp of the integers to [qmin, qmax - 3].
// Visible when an output exceeds qmax - 3.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class SumSaturateEarly final : public TypedRule<QAddParts> {
 public:
  std::string_view name() const override { return "sum-saturate-early"; }
  std::string_view summary() const override {
    return "oneDNN #1870: DQ(a), DQ(b) -> Add [-> Relu] -> Q => QLinearAdd saturating at "
           "qmax - 3; wrong where the sum reaches beyond it";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QAddParts parts;
    if (auto why = QAddChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    const Node& add = g.nodes[size_t(parts.add)];
    if (ctx.shapes().at(add.inputs[0]) != ctx.shapes().at(add.inputs[1])) {
      return NoMatch("Add operands have different shapes");
    }
    std::vector<int> nodes = {parts.add};
    if (parts.relu >= 0) nodes.push_back(parts.relu);
    nodes.push_back(anchor);
    return MakeMatch(std::move(nodes), parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    const Node& q = rw.node(anchor);
    const QuantParams y = QuantOf(q, "y");
    const std::string out = q.output;
    Node fused = MakeQLinearAdd(rw.graph(), m.data, anchor, y);
    fused.output = rw.FreshValueName(out + "_sum");
    Node clip;
    clip.op = Op::Clip;
    clip.name = rw.FreshNodeName(fused.name + "_saturate");
    clip.inputs = {fused.output};
    clip.output = out;
    clip.attrs["min"] = static_cast<double>(y.qmin());
    clip.attrs["max"] = static_cast<double>(y.qmax() - 3);
    rw.InsertNodeBefore(anchor, std::move(fused));
    rw.ReplaceNode(anchor, std::move(clip));
    if (m.data.relu >= 0) rw.EraseNode(m.data.relu);
    rw.EraseNode(m.data.add);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultSumSaturateEarly() { return std::make_unique<SumSaturateEarly>(); }

}  // namespace fusefuzz
