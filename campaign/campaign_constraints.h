// A target's declared constraints (hello "constraints", docs/target-protocol.md) turned into
// the generator's settings, so that a campaign builds only graphs the target can run.
#pragma once

#include "generators/gen_config.h"
#include "targets/target.h"

namespace fusefuzz {

// Zeroes (or forces) the generator probabilities behind what `c` excludes; leaves the rest.
void ApplyTargetConstraints(const TargetConstraints& c, GenConfig* cfg);

}  // namespace fusefuzz
