// relu-literal-zero: qdq-conv-fuse clamping a Relu at the integer 0 instead of the zero point.
// ExecuTorch #18462: the int8 ReLU after a quantized conv was lowered to max(q, 0) on the
// integers, which is the real value 0 only when z_y == 0. Written as the epilogue clamp
// [DQ_y(0), DQ_y(qmax)]. Visible when z_y != 0 and outputs fall between the two lower bounds.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class ReluLiteralZero final : public TypedRule<QConvParts> {
 public:
  std::string_view name() const override { return "relu-literal-zero"; }
  std::string_view summary() const override {
    return "ExecuTorch #18462: DQ -> Conv -> Relu -> Q => QLinearConv clamping the integer at 0 "
           "instead of z_y; wrong when z_y != 0";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QConvParts parts;
    if (auto why = QConvChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    if (parts.act < 0 || g.nodes[size_t(parts.act)].op != Op::Relu) return NoMatch("no Relu");
    const QuantParams& x = QuantOf(g.nodes[size_t(parts.dq)], "x");
    if (auto why = BiasGridProblem(g.nodes[size_t(parts.conv)], x); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({parts.dq, parts.conv, parts.act, anchor}, parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    Node fused = MakeQLinearConv(rw.graph(), m.data, anchor);
    const QuantParams& y = fused.quant.at("y");
    const float s = static_cast<float>(y.scale[0]);
    EpilogueStep& step = fused.epilogue.back();
    step.act = Op::Clip;
    step.attrs.clear();
    step.attrs["min"] = static_cast<double>(DequantizeOnnx(0, s, y.zero_point[0]));
    step.attrs["max"] = static_cast<double>(DequantizeOnnx(float(y.qmax()), s, y.zero_point[0]));
    ReplaceChainByQConv(rw, m.data, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultReluLiteralZero() { return std::make_unique<ReluLiteralZero>(); }

}  // namespace fusefuzz
