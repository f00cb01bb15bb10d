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
  // The optimized run's numbers pass, but a node the backend's own configuration promises to
  // quantize ran in float or reference form (a quantized target's "node_forms"): the model is
  // not the int8 model the user asked for.
  kUnquantized,
};

// "fusion", "kernel", "crash", "timeout", "target_error", "unquantized"; "" for kNone.
std::string_view FindingKindName(FindingKind k);
// The inverse for the six finding kinds; nullopt for anything else (including "").
std::optional<FindingKind> ParseFindingKind(std::string_view name);

}  // namespace fusefuzz
