// Pass "kernel": conv and pool windows smaller: to 1, then by 2, then by 1 per side. A conv keeps
// the central taps of W and loses dilation * (taps dropped on that side) of padding per side,
// so a "same" conv keeps its output size; a pool's pads are clamped below the new kernel.
#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

int64_t NewKernel(int64_t k, int mode) {
  if (k <= 1) return k;
  switch (mode) {
    case 0:
      return 1;
    case 1:
      return std::max<int64_t>(1, k - 2);
    default:
      return k - 1;
  }
}

// Window sides (kH, kW) of a conv (from W) or pool.
std::vector<int64_t> KernelOf(const Node& n) {
  if (IsConv(n)) return {n.params.at("W").shape[2], n.params.at("W").shape[3]};
  return AttrInts(n, "kernel_shape");
}

class KernelPass final : public NodeEditPass {
 public:
  std::string_view name() const override { return "kernel"; }
  int modes() const override { return 3; }
  std::string mode_name(int mode) const override {
    return mode == 0 ? "to-1" : mode == 1 ? "minus-2" : "minus-1";
  }

 private:
  bool Eligible(const Node& n, int) const override {
    if (!IsConv(n) && !IsWindowPool(n)) return false;
    const std::vector<int64_t> k = KernelOf(n);
    return k.size() == 2 && (k[0] > 1 || k[1] > 1);
  }
  void Edit(Node& n, int mode) const override {
    const std::vector<int64_t> k = KernelOf(n);
    std::vector<int64_t> pads = PadsOf(n);
    std::vector<int64_t> nk = {NewKernel(k[0], mode), NewKernel(k[1], mode)};
    if (IsConv(n)) {
      const ConvAttrs a = GetConvAttrs(n);
      const int64_t dil[2] = {a.dilation_h, a.dilation_w};
      Tensor w = n.params.at("W");
      for (size_t d = 0; d < 2; ++d) {
        const int64_t off = (k[d] - nk[d]) / 2;
        w = SliceDim(w, 2 + d, off, nk[d]);
        pads[d] = ClampPad(pads[d] - dil[d] * off);
        pads[d + 2] = ClampPad(pads[d + 2] - dil[d] * (k[d] - nk[d] - off));
      }
      n.params["W"] = std::move(w);
    } else {
      SetInts(n, "kernel_shape", nk);
      for (size_t d = 0; d < 2; ++d) {
        pads[d] = std::min(pads[d], nk[d] - 1);
        pads[d + 2] = std::min(pads[d + 2], nk[d] - 1);
      }
    }
    SetInts(n, "pads", pads);
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeKernelPass() { return std::make_unique<KernelPass>(); }

}  // namespace fusefuzz
