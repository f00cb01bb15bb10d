// How `check --layers` shows its teacher-forced layer table (harness/layerwise.h): a text
// table for the terminal and report.md, JSON for `--json`, an SVG bar chart for the folder.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/layerwise.h"

namespace fusefuzz {

// The summary line, the first departing layer (steps, channels, positions), the fusion check
// and the per-layer table (markdown). `indent` prefixes every line.
std::string LayerwiseText(const LayerwiseResult& r, const std::string& indent);
nlohmann::json LayerwiseJson(const LayerwiseResult& r);
// One bar per layer: its informative share (grey), red where a layer departs; a line at 95%.
std::string LayerwiseSvg(const LayerwiseResult& r, const std::string& title);

}  // namespace fusefuzz
