// relu-zero-point-ignored: quantize-activation-drop without the lower-bound test for Relu.
// ONNX Runtime #9425 (fixed by #11696) and onnxruntime-qnn #478: Relu -> Q was removed because
// "the output range already starts at 0" while the output zero point was not qmin; Q then keeps
// the negative values between qmin and z (YOLOv6 mAP 42.6 -> 28.9). Visible when z_y > qmin and
// some input is below -s_y / 2.
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class ReluZeroPointIgnored final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "relu-zero-point-ignored"; }
  std::string_view summary() const override {
    return "ONNX Runtime #9425, onnxruntime-qnn #478: Relu -> Q => Q whatever the zero point; "
           "wrong when z_y > qmin";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int act = -1;
    if (auto why = ActivationQuantizeProblem(g, anchor, &act); !why.empty()) return NoMatch(why);
    if (g.nodes[size_t(act)].op != Op::Relu) return NoMatch("not a Relu");
    const QuantParams& y = QuantOf(g.nodes[size_t(anchor)], "y");
    if (auto why = PositiveScaleProblem(y, "Q 'y'"); !why.empty()) return NoMatch(why);
    return MakeMatch({act, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    DropActivationBeforeQuantize(rw, m.nodes[0], m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultReluZeroPointIgnored() {
  return std::make_unique<ReluZeroPointIgnored>();
}

}  // namespace fusefuzz
