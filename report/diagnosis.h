// The one sentence at the top of a finding's report.md: what failed, after which rewrite, where
// and by how much; for an injected fault, what the fault does (its `fusefuzz list faults` line).
#pragma once

#include <string>

#include "harness/repro.h"

namespace fusefuzz {

// `where` is the worst element as report.md prints it ("`v5` at (0, 1, 2, 3)"), or "".
std::string Diagnosis(const Repro& r, const std::string& where);

// Why no rewrite is blamed, in words a user can act on.
std::string BlameUnavailableReason(const Repro& r);

}  // namespace fusefuzz
