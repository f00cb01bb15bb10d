// bias-not-scaled: conv-bn-fold with the folded bias B' = B + t instead of B * s + t
// (t = beta - mean * s, s = gamma / sqrt(var + eps)).
//
// Reproduces the BN-bias folding bug seen in several converters: the BN shift is added to the
// conv bias, but the bias itself is not multiplied by the BN scale. Invisible for convs without
// bias (or with B = 0), which is why it survives tests on bias-free ResNet convs; wrong by
// B[m] * (s[m] - 1) on every element of channel m when the conv has a bias B[m] != 0 and s != 1.
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"

namespace fusefuzz {
namespace {

class BiasNotScaled final : public ConvBnFoldFault {
 public:
  std::string_view name() const override { return "bias-not-scaled"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm => Conv with W*s and bias B + t instead of B*s + t; wrong when the "
           "conv has a bias != 0 and s != 1";
  }

 protected:
  FoldKnobs knobs() const override {
    FoldKnobs k;
    k.bias_not_scaled = true;
    return k;
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultBiasNotScaled() { return std::make_unique<BiasNotScaled>(); }

}  // namespace fusefuzz
