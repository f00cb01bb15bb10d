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

std::vector<FaultEntry> MakeFaults();

// One factory per fault file.
std::unique_ptr<Rule> MakeFaultThroughActivation();
std::unique_ptr<Rule> MakeFaultDeclarationOrder();
std::unique_ptr<Rule> MakeFaultBnBnHalfFold();
std::unique_ptr<Rule> MakeFaultMultiConsumer();
std::unique_ptr<Rule> MakeFaultBnBeforePaddedConv();
std::unique_ptr<Rule> MakeFaultBiasNotScaled();
std::unique_ptr<Rule> MakeFaultEpsDropped();
std::unique_ptr<Rule> MakeFaultGroupsLayout();
std::unique_ptr<Rule> MakeFaultRelu6Unbounded();
std::unique_ptr<Rule> MakeFaultActivationBeforeAdd();
std::unique_ptr<Rule> MakeFaultSubConstSide();
std::unique_ptr<Rule> MakeFaultPadModeIgnored();
std::unique_ptr<Rule> MakeFaultPoolNonmonotone();

}  // namespace fusefuzz
