// maxpool-negative-scale: qdq-maxpool-fold without its positive-scale check. ONNX Runtime
// #21176 (fixed by #21182): DQ -> MaxPool -> Q with a negative scale was dropped to an integer
// MaxPool; DQ then reverses the order, so the float max is the integer min. Visible whenever a
// window holds two different integers and the scale is negative (graph option
// allow_negative_scale).
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class MaxPoolNegativeScale final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "maxpool-negative-scale"; }
  std::string_view summary() const override {
    return "ONNX Runtime #21176: DQ -> MaxPool -> Q => integer MaxPool for any scale; wrong for "
           "a negative scale (max becomes min)";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    int dq = -1, pool = -1;
    if (auto why = QdqMaxPoolProblem(ctx.graph(), anchor, &dq, &pool); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({dq, pool, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceByIntegerMaxPool(rw, m.nodes[0], m.nodes[1], m.nodes[2]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultMaxPoolNegativeScale() {
  return std::make_unique<MaxPoolNegativeScale>();
}

}  // namespace fusefuzz
