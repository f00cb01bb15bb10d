// "Did you mean": the known name closest to a mistyped one (`--secs` -> `--seconds`,
// `PadFusion` -> `Pad_Fusion`, `through-activaton` -> `through-activation`).
#pragma once

#include <string>
#include <vector>

namespace fusefuzz {

// The closest of `names` to `typed`, or "" when none is close enough to be a plausible typo or
// abbreviation. Case, '-' and '_' count less than letters: `conv_bn_fold` finds `conv-bn-fold`.
std::string ClosestName(const std::string& typed, const std::vector<std::string>& names);

// "; did you mean 'X'?" or "" (for appending to an error message).
std::string DidYouMean(const std::string& typed, const std::vector<std::string>& names);

}  // namespace fusefuzz
