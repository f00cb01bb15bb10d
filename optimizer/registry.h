// How rules and faults register themselves: explicitly, without global mutable state.
//
// Rules: one file per rule in optimizer/rules/<name>.cc defines a factory
// (`std::unique_ptr<Rule> MakeConvBnFold();`) and one line of optimizer/rules/rules.def
// registers it, in default pipeline order. Faults: one file per fault in optimizer/faults/ and
// one line of optimizer/faults/faults.def (factory, name, the rule it corrupts).
// AllRules() / AllFaults() build the tables once (function-local statics, immutable after
// construction) and hand out const pointers.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/rule.h"

namespace fusefuzz {

// One fault of the catalogue. `before` names the rule the fault corrupts: when injected, the
// fault runs as a pipeline stage just before that rule (so it sees the pattern first). If that
// rule is not in the pipeline (disabled, or not in `only`), the fault goes where the rule would
// have been in the default order. `before` must name a registered rule.
struct FaultEntry {
  std::unique_ptr<Rule> rule;
  std::string before;
  std::string_view declared_name;  // as written in faults.def
};

// Rules in default pipeline order. Names are unique (checked when the table is built).
const std::vector<const Rule*>& AllRules();

struct FaultInfo {
  const Rule* rule;
  std::string before;
};
// The fault catalogue, in MakeFaults() order. Fault names are unique and distinct from rule
// names; each `before` names a rule (violations abort at table construction: a code bug).
const std::vector<FaultInfo>& AllFaults();

// nullptr when absent.
const Rule* FindRule(std::string_view name);
const FaultInfo* FindFault(std::string_view name);

}  // namespace fusefuzz
