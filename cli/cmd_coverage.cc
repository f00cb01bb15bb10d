// `fusefuzz coverage [--graphs N] [--seed S] [--config F] [--min-share X] [--json]`: generates
// the graphs a campaign with these settings would check (case i uses CaseSeed(S, i)) and prints
// how often each coverage class of generators/coverage.def occurs, flagging rare ones.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "cli/cli.h"
#include "generators/coverage.h"
#include "generators/generator.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

struct CoverageOptions {
  int64_t graphs = 10000;
  uint64_t seed = 1;
  std::string config;
  double min_share = 0.002;
  bool json = false, only_flagged = false;
};

}  // namespace

void RegisterCoverage(Cli& cli) {
  auto o = std::make_shared<CoverageOptions>();
  auto* cmd = cli.app.add_subcommand(
      "coverage", "Count the generator's coverage classes over N generated graphs");
  cmd->add_option("--graphs", o->graphs, "graphs to generate (default 10000)")
      ->check(kPositiveNumber);
  cmd->add_option("--seed", o->seed, "base seed, as for `fuzz` (default 1)")->check(kSeed);
  cmd->add_option("--config", o->config, "generator config JSON");
  cmd->add_option("--min-share", o->min_share,
                  "flag classes present in fewer than this fraction of graphs (default 0.002)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--only-flagged", o->only_flagged, "list only the flagged classes");
  cmd->add_flag("--json", o->json, "JSON instead of a markdown table");
  cmd->callback([o] {
    GenConfig cfg;
    if (!o->config.empty()) cfg = ConfigFromJson(ReadJsonFile(o->config), o->config);
    CoverageTally tally;
    for (int64_t i = 0; i < o->graphs; ++i) {
      tally.AddGraph(GenerateFromSeed(CaseSeed(o->seed, i), cfg).graph);
    }
    CoverageTableOptions t;
    t.min_share = o->min_share;
    t.only_flagged = o->only_flagged;
    if (o->json) {
      std::cout << CoverageToJson(tally, t).dump(1) << "\n";
    } else {
      std::cout << RenderCoverageMarkdown(tally, t);
    }
  });
}

}  // namespace fusefuzz
