#include "optimizer/pipeline.h"

#include <algorithm>

#include "ir/closest_name.h"
#include "ir/error.h"
#include "optimizer/registry.h"

namespace fusefuzz {
namespace {

[[noreturn]] void Unknown(const std::string& field, size_t i, const std::string& name,
                          const std::string& kind) {
  std::vector<std::string> names;
  if (kind != "fault") {
    for (const Rule* r : AllRules()) names.emplace_back(r->name());
  }
  if (kind != "rule") {
    for (const FaultInfo& f : AllFaults()) names.emplace_back(f.rule->name());
  }
  throw InputError("optimizer options: " + field + "[" + std::to_string(i) + "]",
                   "unknown " + kind + " '" + name + "'" + DidYouMean(name, names) + "; known " +
                       KnownNamesText());
}

bool IsRuleOrFault(const std::string& name) { return FindRule(name) || FindFault(name); }

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string KnownNamesText() {
  std::string s = "rules: ";
  bool first = true;
  for (const Rule* r : AllRules()) {
    s += (first ? "" : ", ") + std::string(r->name());
    first = false;
  }
  s += "; faults: ";
  first = true;
  for (const FaultInfo& f : AllFaults()) {
    s += (first ? "" : ", ") + std::string(f.rule->name());
    first = false;
  }
  if (AllFaults().empty()) s += "(none)";
  return s;
}

std::vector<const Rule*> BuildPipeline(const OptimizeOptions& opts) {
  for (size_t i = 0; i < opts.pipeline.size(); ++i) {
    if (!FindRule(opts.pipeline[i])) Unknown("pipeline", i, opts.pipeline[i], "rule");
  }
  for (size_t i = 0; i < opts.inject.size(); ++i) {
    if (!FindFault(opts.inject[i])) Unknown("inject", i, opts.inject[i], "fault");
  }
  for (size_t i = 0; i < opts.disable.size(); ++i) {
    if (!IsRuleOrFault(opts.disable[i])) Unknown("disable", i, opts.disable[i], "rule or fault");
  }
  for (size_t i = 0; i < opts.only.size(); ++i) {
    if (!IsRuleOrFault(opts.only[i])) Unknown("only", i, opts.only[i], "rule or fault");
  }

  std::vector<const Rule*> stages;
  if (opts.pipeline.empty()) {
    stages = AllRules();
  } else {
    for (const auto& name : opts.pipeline) stages.push_back(FindRule(name));
  }
  std::vector<std::string> injected;  // each fault once, in first-mention order
  for (const auto& name : opts.inject) {
    if (Contains(injected, name)) continue;
    injected.push_back(name);
    const FaultInfo* f = FindFault(name);
    auto at = std::find_if(stages.begin(), stages.end(),
                           [&](const Rule* r) { return r->name() == f->before; });
    stages.insert(at, f->rule);
  }
  std::vector<const Rule*> out;
  for (const Rule* r : stages) {
    if (Contains(opts.disable, r->name())) continue;
    if (!opts.only.empty() && !Contains(opts.only, r->name())) continue;
    out.push_back(r);
  }
  return out;
}

}  // namespace fusefuzz
