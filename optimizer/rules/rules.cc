#include "optimizer/rules/rules.h"

namespace fusefuzz {

// Default pipeline order. Cleanups first; folds into conv weights before fusions, because the
// folds need a plain Conv producer and a fused epilogue would hide it; conv-activation-fuse
// before pool-activation-reorder so that an activation next to a conv is fused, not moved.
std::vector<std::unique_ptr<Rule>> MakeDefaultRules() {
  std::vector<std::unique_ptr<Rule>> r;
  r.push_back(MakeIdentityElim());
  r.push_back(MakeDeadNodeElim());
  r.push_back(MakeBnBnMerge());
  r.push_back(MakeConvBnFold());
  r.push_back(MakeBnConvFold());
  r.push_back(MakeConvScaleFold());
  r.push_back(MakeConvShiftFold());
  r.push_back(MakePadConvFold());
  r.push_back(MakePadPoolFold());
  r.push_back(MakeConvAddFuse());
  r.push_back(MakeConvActivationFuse());
  r.push_back(MakePoolActivationReorder());
  return r;
}

}  // namespace fusefuzz
