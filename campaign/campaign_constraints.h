// A target's declared constraints (hello "constraints", docs/target-protocol.md) turned into
// the generator's settings, so that a campaign builds only graphs the target can run.
#pragma once

#include <string>

#include "generators/gen_config.h"
#include "targets/target.h"

namespace fusefuzz {

// Zeroes (or forces) the generator probabilities behind what `c` excludes; leaves the rest.
void ApplyTargetConstraints(const TargetConstraints& c, GenConfig* cfg);

// The class of an UNSUPPORTED reason for the summary's table: ErrorClass (harness/check.h) with
// type names kept whole ("int8 activations", not "int# activations": the table must say which
// type the target refused, so that its constraint can be declared).
std::string UnsupportedReasonClass(const std::string& message);

}  // namespace fusefuzz
