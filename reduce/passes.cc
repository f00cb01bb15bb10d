#include "reduce/reduce.h"

namespace fusefuzz {

std::vector<std::unique_ptr<ReducePass>> DefaultReducePasses() {
  std::vector<std::unique_ptr<ReducePass>> p;
#define FUSEFUZZ_REDUCE_PASS(factory) p.push_back(Make##factory##Pass());
#include "reduce/passes.def"
#undef FUSEFUZZ_REDUCE_PASS
  return p;
}

}  // namespace fusefuzz
