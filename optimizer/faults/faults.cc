#include "optimizer/faults/faults.h"

namespace fusefuzz {

std::vector<FaultEntry> MakeFaults() {
  std::vector<FaultEntry> f;
#define FUSEFUZZ_FAULT(factory, name, before) f.push_back({Make##factory(), before, name});
#include "optimizer/faults/faults.def"
#undef FUSEFUZZ_FAULT
  return f;
}

}  // namespace fusefuzz
