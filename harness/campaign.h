// The fuzz campaign: generate graphs, check each on the target, blame/minimize/report findings.
// Runs J worker processes (case i goes to worker i mod J); findings are written atomically by the
// workers, so a worker that dies loses nothing already written; the parent restarts it after
// recording the case it died on as a crash finding, prints a status line about once a second,
// and writes the summary (also on Ctrl-C).
#pragma once

#include <cstdint>
#include <string>

#include "generators/gen_config.h"
#include "harness/check.h"
#include "targets/target.h"

namespace fusefuzz {

struct CampaignOptions {
  double seconds = 0;  // 0 = no time limit
  int64_t graphs = 0;  // 0 = no count limit (one of the two must be set)
  uint64_t seed = 1;
  int jobs = 1;
  std::string target = "embedded";
  TargetSettings target_settings;
  CheckOptions check;
  GenConfig gen;
  std::string out_dir = "fusefuzz-out";
  bool minimize = true;
  double minimize_budget = 10;  // seconds per finding
  double case_timeout = 60;     // seconds: a worker stuck this long on one case is killed
  std::string junit;            // JUnit XML path, or empty
  bool status = true;           // status line on stderr
  std::string command_line;     // how the campaign was started, for summary.md ("" = unknown)
};

// Seed of case `index` of a campaign with base seed `seed` (what `fusefuzz gen --seed` takes).
uint64_t CaseSeed(uint64_t seed, int64_t index);

// Returns the exit status: 0 no findings, 1 findings. Throws InputError for bad options.
int RunCampaign(const CampaignOptions& opts);

}  // namespace fusefuzz
