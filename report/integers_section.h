// The "Integers" section of a finding's report.md (issue 24): for an integer-valued output (the
// grid oracle's), per output channel, the reference's unrounded grid position t, the admitted
// integers, the integers after the blamed rewrite, and the excess in steps. Says where a
// quantized fusion went wrong in the terms its bug is told in: one channel (bias, zero point),
// the border (padding), everything (scale, activation, saturation limit).
#pragma once

#include <string>

#include "harness/repro.h"

namespace fusefuzz {

// "" when the worst output is not integer-valued or the values cannot be recomputed; else the
// markdown section, "## Integers of ..." and its table. `after` is the graph right after the
// blamed rewrite; without it, `answered` is the target's own answer on that output (an external
// target reports no graph); with neither, the section shows the reference only.
std::string IntegersSection(const Repro& r, const Graph* after, const Tensor* answered = nullptr);

// "## Clamp bounds on the grid": each Relu6/Clip that feeds a QuantizeLinear, its bounds as
// s·(q − z) with q the bound's unrounded grid position, Q(bound) and the half-step margin, the
// distance of q from the half step that decides whether Q(bound) is the type's limit (what the
// quantize-activation-drop rule and its faults turn on; issue 45, item 3). "" when none.
std::string ClampBoundsSection(const Graph& g);

}  // namespace fusefuzz
