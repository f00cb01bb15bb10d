// Engine fusion coverage: of the fusions the target declares (its hello's "fusions" or "rules"),
// which fired in a campaign's optimized runs and which never did. Rendered into summary.json
// ("engine_fusions"), summary.md, summary.html and the console line at the end of `fuzz`.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/campaign_summary.h"

namespace fusefuzz {

struct EngineFusionCoverage {
  std::vector<std::string> declared;               // as declared, sorted, unique
  std::map<std::string, int64_t> fired;            // declared ones that fired -> rewrites
  std::vector<std::string> never_fired;            // declared, reachable, not fired
  std::map<std::string, std::string> unreachable;  // declared, not fired, cannot fire: why
  std::map<std::string, int64_t> undeclared;       // fired but not declared (containers, ...)
};

EngineFusionCoverage ComputeEngineFusions(const CampaignStats& s);

// {"engine", "declared", "fired": {name: count}, "never_fired", "unreachable": {name: why},
// "undeclared_fired": {name: count}}; null when the target declares no fusion.
nlohmann::json EngineFusionsJson(const CampaignStats& s);
// Restores the declaration from summary.json's "engine_fusions" (a resumed campaign).
void EngineFusionsFromJson(const nlohmann::json& j, CampaignStats* s);

// summary.md's section ("" when nothing is declared).
std::string EngineFusionsMarkdown(const CampaignStats& s);
// summary.html's section ("" when nothing is declared).
std::string EngineFusionsHtml(const CampaignStats& s);
// The end of `fuzz` and `coverage --target`: "engine fusions: 12 / 70 fired; never fired: ...".
std::string EngineFusionsConsole(const CampaignStats& s);

}  // namespace fusefuzz
