// Factories of the embedded optimizer's rules, one per file optimizer/rules/<name>.cc.
// MakeDefaultRules() (rules.cc) lists them in default pipeline order; see docs/rules.md.
#pragma once

#include <memory>
#include <vector>

#include "optimizer/rule.h"

namespace fusefuzz {

std::unique_ptr<Rule> MakeIdentityElim();
std::unique_ptr<Rule> MakeDeadNodeElim();
std::unique_ptr<Rule> MakeBnBnMerge();
std::unique_ptr<Rule> MakeConvBnFold();
std::unique_ptr<Rule> MakeBnConvFold();
std::unique_ptr<Rule> MakeConvScaleFold();
std::unique_ptr<Rule> MakeConvShiftFold();
std::unique_ptr<Rule> MakePadConvFold();
std::unique_ptr<Rule> MakePadPoolFold();
std::unique_ptr<Rule> MakeConvAddFuse();
std::unique_ptr<Rule> MakeConvActivationFuse();
std::unique_ptr<Rule> MakePoolActivationReorder();

// All rules, in default pipeline order.
std::vector<std::unique_ptr<Rule>> MakeDefaultRules();

}  // namespace fusefuzz
