// summary.html: one self-contained page for a campaign (inline CSS and SVG, no scripts, no
// external requests), readable straight from a CI artifact: the summary, every unique finding
// with its numbers and before/after pictures, the rule-fire table.
#pragma once

#include <string>

#include "report/campaign_summary.h"

namespace fusefuzz {

// The page's HTML. Reads the finding folders `out_dir/findings/<signature>/` named in
// `stats.unique` (repro.json, report.md, before.svg, after.svg); a missing or unreadable file
// leaves a note instead of failing.
std::string HtmlReport(const std::string& out_dir, const CampaignStats& stats);

// Writes out_dir/summary.html.
void WriteHtmlReport(const std::string& out_dir, const CampaignStats& stats);

}  // namespace fusefuzz
