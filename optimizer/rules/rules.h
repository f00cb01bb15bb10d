// Factories of the embedded optimizer's rules, one per file optimizer/rules/<name>.cc, declared
// from rules.def (one line per rule, in default pipeline order); see docs/adding-a-rule.md.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "optimizer/rule.h"

namespace fusefuzz {

#define FUSEFUZZ_RULE(factory, name) std::unique_ptr<Rule> Make##factory();
#include "optimizer/rules/rules.def"
#undef FUSEFUZZ_RULE

struct RuleEntry {
  std::unique_ptr<Rule> rule;
  std::string_view declared_name;  // as written in rules.def
};

// All rules, in default pipeline order (rules.def).
std::vector<RuleEntry> MakeDefaultRules();

}  // namespace fusefuzz
