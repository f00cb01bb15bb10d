// What a failing case is. The JSON spelling (reproducers, summaries, folder names) is the name.
#pragma once

#include <optional>
#include <string_view>

namespace fusefuzz {

enum class FindingKind {
  kNone,         // no finding
  kFusion,       // only the optimized run disagrees with the reference
  kKernel,       // the unoptimized run already disagrees
  kCrash,        // the target died
  kTimeout,      // the target hung past the per-case timeout
  kTargetError,  // the target answered with an error (or a malformed response)
};

// "fusion", "kernel", "crash", "timeout", "target_error"; "" for kNone.
std::string_view FindingKindName(FindingKind k);
// The inverse for the five finding kinds; nullopt for anything else (including "").
std::optional<FindingKind> ParseFindingKind(std::string_view name);

}  // namespace fusefuzz
