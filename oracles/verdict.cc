#include "oracles/verdict.h"

namespace fusefuzz {
namespace {
constexpr std::pair<Verdict, std::string_view> kNames[] = {
    {Verdict::kPass, "PASS"},
    {Verdict::kMismatch, "MISMATCH"},
    {Verdict::kMistrusted, "MISTRUSTED"},
    {Verdict::kTargetError, "TARGET_ERROR"},
    {Verdict::kCrash, "CRASH"},
    {Verdict::kTimeout, "TIMEOUT"},
    {Verdict::kUnsupported, "UNSUPPORTED"},
};
}  // namespace

std::string_view VerdictName(Verdict v) {
  for (const auto& [verdict, name] : kNames)
    if (verdict == v) return name;
  return "?";
}

std::optional<Verdict> VerdictFromName(std::string_view name) {
  for (const auto& [verdict, n] : kNames)
    if (n == name) return verdict;
  return std::nullopt;
}

}  // namespace fusefuzz
