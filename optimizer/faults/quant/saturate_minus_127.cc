// saturate-minus-127: qdq-conv-fuse saturating an int8 output to [-127, 127]. ONNX Runtime
// #3442: the int8 requantization clamped to the symmetric range, so every output that should be
// -128 came out -127. Written as the epilogue clamp [DQ_y(-127), DQ_y(127)] of a chain without
// an activation. Visible when an int8 output saturates low (or rounds to -128).
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class SaturateMinus127 final : public TypedRule<QConvParts> {
 public:
  std::string_view name() const override { return "saturate-minus-127"; }
  std::string_view summary() const override {
    return "ONNX Runtime #3442: DQ -> Conv -> Q(int8) => QLinearConv saturating at -127; wrong "
           "where the output is -128";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    QConvParts parts;
    if (auto why = QConvChainProblem(g, anchor, &parts); !why.empty()) return NoMatch(why);
    if (parts.act >= 0) return NoMatch("the chain has an activation");
    if (QuantOf(g.nodes[size_t(anchor)], "y").type != QuantType::kInt8) {
      return NoMatch("output is not int8");
    }
    const QuantParams& x = QuantOf(g.nodes[size_t(parts.dq)], "x");
    if (auto why = BiasGridProblem(g.nodes[size_t(parts.conv)], x); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({parts.dq, parts.conv, anchor}, parts);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int anchor = m.nodes.back();
    Node fused = MakeQLinearConv(rw.graph(), m.data, anchor);
    const QuantParams& y = fused.quant.at("y");
    const float s = static_cast<float>(y.scale[0]);
    EpilogueStep step;
    step.kind = EpilogueKind::kActivation;
    step.act = Op::Clip;
    step.attrs["min"] = static_cast<double>(DequantizeOnnx(-127, s, y.zero_point[0]));
    step.attrs["max"] = static_cast<double>(DequantizeOnnx(127, s, y.zero_point[0]));
    fused.epilogue.push_back(std::move(step));
    ReplaceChainByQConv(rw, m.data, anchor, std::move(fused));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultSaturateMinus127() { return std::make_unique<SaturateMinus127>(); }

}  // namespace fusefuzz
