#include "optimizer/rules/rules.h"

namespace fusefuzz {

std::vector<RuleEntry> MakeDefaultRules() {
  std::vector<RuleEntry> r;
#define FUSEFUZZ_RULE(factory, name) r.push_back({Make##factory(), name});
#include "optimizer/rules/rules.def"
#undef FUSEFUZZ_RULE
  return r;
}

}  // namespace fusefuzz
