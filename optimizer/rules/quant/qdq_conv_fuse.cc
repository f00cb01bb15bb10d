// qdq-conv-fuse: DequantizeLinear -> Conv [-> Relu/Relu6/Clip] -> QuantizeLinear  =>  one
// QLinearConv (integer conv, int32 accumulation, requantization, the activation as the clamp).
// Exact in the reference's semantics when the conv's weight is declared on an int8 grid with
// zero point 0 (QLinearConv's W are those integers) and its bias, if any, on the int32 grid of
// s_x * s_w[m] with zero point 0 (QLinearConv adds B * s_x * s_w): a bias on another scale, or
// with a zero point, would be re-read at the wrong scale and shift every output. The conv and
// activation outputs must have no other use and not be graph outputs (they disappear); the DQ
// stays when something else reads it.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QdqConvFuse final : public TypedRule<QConvParts> {
 public:
  std::string_view name() const override { return "qdq-conv-fuse"; }
  std::string_view summary() const override {
    return "DQ -> Conv [-> Relu/Relu6/Clip] -> Q => QLinearConv; DQ input holds integers of its "
           "type; x and y 8-bit per tensor, scale > 0; W declared int8, zero point 0, per tensor "
           "or axis 0; B absent or declared int32 at float32(s_x*s_w[m]) with zero point 0; conv "
           "and activation outputs have no other consumer and are not graph outputs";
  }

  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QConvParts parts;
    if (auto why = QConvChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    const QuantParams& x = QuantOf(g.nodes[size_t(parts.dq)], "x");
    if (auto why = BiasGridProblem(g.nodes[size_t(parts.conv)], x); !why.empty()) {
      return NoMatch(why);
    }
    std::vector<int> nodes = {parts.dq, parts.conv};
    if (parts.act >= 0) nodes.push_back(parts.act);
    nodes.push_back(anchor);
    return MakeMatch(std::move(nodes), parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const QConvParts& parts = m.data;
    const int anchor = m.nodes.back();
    Node fused = MakeQLinearConv(rw.graph(), parts, anchor);
    ReplaceChainByQConv(rw, parts, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQdqConvFuse() { return std::make_unique<QdqConvFuse>(); }

}  // namespace fusefuzz
