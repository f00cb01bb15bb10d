// The one sentence at the top of a finding's report.md: what failed, after which rewrite, where
// and by how much; for an injected fault, what the fault does (its `fusefuzz list faults` line).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/repro.h"

namespace fusefuzz {

// `where` is the worst element as report.md prints it ("`v5` at (0, 1, 2, 3)"), or "".
std::string Diagnosis(const Repro& r, const std::string& where);

// An `unquantized` finding's nodes that ran in float or reference form, with that form, as the
// check recorded them in its detail ("quantizes 'c1' (float), 'c2' (reference), which ran ...").
std::vector<std::pair<std::string, std::string>> UnquantizedNodes(const Repro& r);

// Why no rewrite is blamed, in words a user can act on.
std::string BlameUnavailableReason(const Repro& r);

}  // namespace fusefuzz
