// eps-dropped: conv-bn-fold with s = gamma / sqrt(var) instead of gamma / sqrt(var + eps).
//
// Reproduces the epsilon-dropping bug of BN folds (and of hand-written BN kernels): harmless
// while var >> eps, so it passes on trained networks, but a channel whose running variance is
// comparable to eps (dead or nearly constant channels, freshly initialised BNs with a large eps)
// is scaled by sqrt((var + eps) / var) too much. Refused when some var is 0 (the real bug would
// produce inf; the catalogue's faults must leave a valid graph).
#include <memory>

#include "optimizer/faults/fault_util.h"
#include "optimizer/faults/faults.h"

namespace fusefuzz {
namespace {

class EpsDropped final : public ConvBnFoldFault {
 public:
  std::string_view name() const override { return "eps-dropped"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm => Conv folded with s = gamma/sqrt(var) (eps dropped); wrong when "
           "some var is not >> eps; refused when a var is 0";
  }

 protected:
  FoldKnobs knobs() const override { return {}; }
  bool drop_eps() const override { return true; }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultEpsDropped() { return std::make_unique<EpsDropped>(); }

}  // namespace fusefuzz
