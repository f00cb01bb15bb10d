#include "harness/finding_kind.h"

namespace fusefuzz {

std::string_view FindingKindName(FindingKind k) {
  switch (k) {
    case FindingKind::kNone:
      return "";
    case FindingKind::kFusion:
      return "fusion";
    case FindingKind::kKernel:
      return "kernel";
    case FindingKind::kCrash:
      return "crash";
    case FindingKind::kTimeout:
      return "timeout";
    case FindingKind::kTargetError:
      return "target_error";
    case FindingKind::kUnquantized:
      return "unquantized";
  }
  return "";
}

std::optional<FindingKind> ParseFindingKind(std::string_view name) {
  for (FindingKind k :
       {FindingKind::kFusion, FindingKind::kKernel, FindingKind::kCrash, FindingKind::kTimeout,
        FindingKind::kTargetError, FindingKind::kUnquantized})
    if (FindingKindName(k) == name) return k;
  return std::nullopt;
}

}  // namespace fusefuzz
