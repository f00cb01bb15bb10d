// The pass order: coarse structure first (each accepted step there makes every later query
// cheaper), then shapes, then geometry, then values.
#include "reduce/reduce.h"

namespace fusefuzz {

std::vector<std::unique_ptr<ReducePass>> DefaultReducePasses() {
  std::vector<std::unique_ptr<ReducePass>> p;
  p.push_back(MakeOutputsPass());
  p.push_back(MakeBypassPass());
  p.push_back(MakeCutPass());
  p.push_back(MakeBatchPass());
  p.push_back(MakeChannelsPass());
  p.push_back(MakeSpatialPass());
  p.push_back(MakeGroupsPass());
  p.push_back(MakeKernelPass());
  p.push_back(MakeDilationPass());
  p.push_back(MakeStridePass());
  p.push_back(MakePadsPass());
  p.push_back(MakeParamValuesPass());
  p.push_back(MakeInputValuesPass());
  p.push_back(MakeAttrValuesPass());
  return p;
}

}  // namespace fusefuzz
