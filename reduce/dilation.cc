// Pass "dilation": conv dilation to 1. The window shrinks from d*(k-1)+1 to k, so the pads
// lose (d-1)*(k-1) in total (split between the two sides, clamped at 0): a "same" conv keeps its
// output size.
#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class DilationPass final : public NodeEditPass {
 public:
  std::string_view name() const override { return "dilation"; }

 private:
  bool Eligible(const Node& n, int) const override {
    if (!IsConv(n)) return false;
    const ConvAttrs a = GetConvAttrs(n);
    return a.dilation_h > 1 || a.dilation_w > 1;
  }
  void Edit(Node& n, int) const override {
    const ConvAttrs a = GetConvAttrs(n);
    const Shape& w = n.params.at("W").shape;
    const int64_t dil[2] = {a.dilation_h, a.dilation_w};
    std::vector<int64_t> pads = PadsOf(n);
    for (size_t d = 0; d < 2; ++d) {
      const int64_t lost = (dil[d] - 1) * (w[2 + d] - 1);
      pads[d] = ClampPad(pads[d] - lost / 2);
      pads[d + 2] = ClampPad(pads[d + 2] - (lost - lost / 2));
    }
    SetInts(n, "pads", pads);
    n.attrs.erase("dilations");
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeDilationPass() { return std::make_unique<DilationPass>(); }

}  // namespace fusefuzz
