#include "targets/rule_names.h"

#include <algorithm>

#include "ir/closest_name.h"
#include "ir/error.h"
#include "optimizer/registry.h"

namespace fusefuzz {

bool HasControlCharacter(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 || b == 0x7f;
  });
}

std::vector<std::string> AcceptedRuleNames(const TargetCaps& caps) {
  if (!caps.rules.empty()) return caps.rules;
  std::vector<std::string> names;
  if (!caps.disable) return names;
  for (const Rule* r : AllRules()) names.emplace_back(r->name());
  for (const FaultInfo& f : AllFaults()) names.emplace_back(f.rule->name());
  return names;
}

std::vector<std::string> DeclaredFusions(const TargetCaps& caps) {
  if (!caps.fusions.empty()) return caps.fusions;
  if (!caps.rules.empty()) return caps.rules;
  std::vector<std::string> names;
  if (!caps.disable) return names;
  for (const Rule* r : AllRules()) names.emplace_back(r->name());
  return names;
}

void CheckRuleNames(const TargetCaps& caps, const OptimizeOptions& opt, const std::string& what) {
  std::vector<std::string> given;
  for (const auto* list : {&opt.pipeline, &opt.disable, &opt.only})
    given.insert(given.end(), list->begin(), list->end());
  if (given.empty()) return;
  if (!caps.disable) {
    throw InputError(what, "target '" + caps.name +
                               "' lacks the capability disable: it cannot switch rules on or "
                               "off, so '" +
                               given.front() + "' would change nothing");
  }
  const std::vector<std::string> known = AcceptedRuleNames(caps);
  for (const std::string& name : given) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    const std::string near = ClosestName(name, known);
    throw InputError(what, "unknown rule '" + name + "' for target '" + caps.name + "'" +
                               (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                               "; its rules: " + list);
  }
}

}  // namespace fusefuzz
