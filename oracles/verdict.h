// The outcome of checking one case against one target (benchdnn-style statuses).
#pragma once

#include <optional>
#include <string_view>

namespace fusefuzz {

enum class Verdict {
  kPass,         // every judged element within its bound, and the data could tell
  kMismatch,     // an element outside its bound, or NaN/Inf disagreeing in position or sign
  kMistrusted,   // nothing failed, but the data cannot tell (all zeros, nothing finite, ...)
  kTargetError,  // the target answered with an error, or outputs missing / mis-sized
  kCrash,        // the target process died
  kTimeout,      // the target did not answer in time
  kUnsupported,  // the target declined the graph
};

// "PASS", "MISMATCH", "MISTRUSTED", "TARGET_ERROR", "CRASH", "TIMEOUT", "UNSUPPORTED".
std::string_view VerdictName(Verdict v);
std::optional<Verdict> VerdictFromName(std::string_view name);
// Whether the verdict is a finding (something to report and minimize).
inline bool IsFinding(Verdict v) {
  return v == Verdict::kMismatch || v == Verdict::kTargetError || v == Verdict::kCrash ||
         v == Verdict::kTimeout;
}

}  // namespace fusefuzz
