// The catalogue's table: each fault with the correct rule whose stage it precedes. The stage is
// chosen so that, in the default pipeline, no earlier rule has already rewritten the pattern the
// fault looks for (e.g. bn-bn-half-fold must run before bn-bn-merge merges the two BNs).
#include "optimizer/faults/faults.h"

namespace fusefuzz {

std::vector<FaultEntry> MakeFaults() {
  std::vector<FaultEntry> f;
  f.push_back({MakeFaultThroughActivation(), "conv-bn-fold"});
  f.push_back({MakeFaultDeclarationOrder(), "conv-bn-fold"});
  f.push_back({MakeFaultBnBnHalfFold(), "bn-bn-merge"});
  f.push_back({MakeFaultMultiConsumer(), "conv-bn-fold"});
  f.push_back({MakeFaultBnBeforePaddedConv(), "bn-conv-fold"});
  f.push_back({MakeFaultBiasNotScaled(), "conv-bn-fold"});
  f.push_back({MakeFaultEpsDropped(), "conv-bn-fold"});
  f.push_back({MakeFaultGroupsLayout(), "conv-bn-fold"});
  f.push_back({MakeFaultRelu6Unbounded(), "conv-activation-fuse"});
  f.push_back({MakeFaultActivationBeforeAdd(), "conv-add-fuse"});
  f.push_back({MakeFaultSubConstSide(), "conv-shift-fold"});
  f.push_back({MakeFaultPadModeIgnored(), "pad-conv-fold"});
  f.push_back({MakeFaultPoolNonmonotone(), "pool-activation-reorder"});
  return f;
}

}  // namespace fusefuzz
