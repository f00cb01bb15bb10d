// bias-scale-unchecked: qdq-conv-fuse without its bias grid check. ONNX Runtime #28229: the QDQ
// Conv -> QLinearConv fusion kept the bias integers although the bias DequantizeLinear's scale
// was not s_x * s_w (or its zero point not 0); QLinearConv re-reads them at s_x * s_w, a silent
// shift of every output of the channel. Visible when a bias grid's scale differs from
// float32(s_x * s_w[m]) or has a zero point, and the bias is not 0.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class BiasScaleUnchecked final : public TypedRule<QConvParts> {
 public:
  std::string_view name() const override { return "bias-scale-unchecked"; }
  std::string_view summary() const override {
    return "ONNX Runtime #28229: DQ -> Conv -> Q => QLinearConv keeping the bias integers of "
           "any grid; wrong when the bias scale != s_x*s_w or its zero point != 0";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QConvParts parts;
    if (auto why = QConvChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    const Node& conv = g.nodes[size_t(parts.conv)];
    // The bias must at least be declared on some int32 grid (its integers are kept).
    if (conv.params.count("B") &&
        (!conv.quant.count("B") || conv.quant.at("B").type != QuantType::kInt32)) {
      return NoMatch("conv bias is not declared on an int32 grid");
    }
    std::vector<int> nodes = {parts.dq, parts.conv};
    if (parts.act >= 0) nodes.push_back(parts.act);
    nodes.push_back(anchor);
    return MakeMatch(std::move(nodes), parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    Node fused = MakeQLinearConv(rw.graph(), m.data, anchor);
    ReplaceChainByQConv(rw, m.data, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultBiasScaleUnchecked() {
  return std::make_unique<BiasScaleUnchecked>();
}

}  // namespace fusefuzz
