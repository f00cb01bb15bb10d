// The fault catalogue: deliberately wrong variants of the rules, off unless injected
// (OptimizeOptions::inject, `--inject NAME`). Each reproduces a real fusion bug (docs/faults.md),
// lives in optimizer/faults/<name>.cc with a paragraph naming the bug, and is registered here
// with the rule it corrupts (FaultEntry::before: it runs as a stage just before that rule, so it
// sees the pattern first).
#pragma once

#include <memory>
#include <vector>

#include "optimizer/registry.h"

namespace fusefuzz {

#define FUSEFUZZ_FAULT(factory, name, before) std::unique_ptr<Rule> Make##factory();
#include "optimizer/faults/faults.def"
#undef FUSEFUZZ_FAULT

// The catalogue in faults.def order.
std::vector<FaultEntry> MakeFaults();

}  // namespace fusefuzz
