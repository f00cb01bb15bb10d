// `fusefuzz coverage [--graphs N] [--seed S] [--config F] [--min-share X] [--json]`: generates
// the graphs a campaign with these settings would check (case i uses CaseSeed(S, i)) and prints
// how often each coverage class of generators/coverage.def occurs, flagging rare ones.
// `fusefuzz coverage --target T [--seconds N] [--quant]`: runs a campaign on T for N seconds
// and prints the engine's fusions fired / declared and those never fired
// (report/engine_coverage.h).
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "cli/cli.h"
#include "generators/coverage.h"
#include "generators/generator.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "report/engine_coverage.h"

namespace fusefuzz {
namespace {

struct CoverageOptions {
  int64_t graphs = 10000;
  uint64_t seed = 1;
  std::string config;
  double min_share = 0.002;
  bool json = false, only_flagged = false;
  // Engine coverage: a campaign on this target.
  std::string target;
  double seconds = 0, timeout = 10;
  bool quant = false;
  int jobs = 1;
  std::string out;
};

// The campaign of `coverage --target`: its engine fusions, from the summary it wrote.
int EngineCoverage(const CoverageOptions& o, GenConfig cfg, CLI::App* cmd,
                   const std::string& command_line) {
  CampaignOptions c;
  c.target = o.target;
  c.seed = o.seed;
  c.jobs = o.jobs;
  c.gen = std::move(cfg);
  if (o.quant) c.gen.quant.enabled = true;
  c.target_settings.timeout_seconds = o.timeout;
  c.seconds = o.seconds > 0 ? o.seconds : 60;
  if (cmd->count("--graphs")) c.graphs = o.graphs;
  if (!cmd->count("--seconds") && c.graphs > 0) c.seconds = 0;
  c.minimize = false;  // which fusions fire is the question here, not the findings' shape
  c.status = false;
  c.command_line = command_line;
  std::string dir = o.out;
  if (dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fusefuzz-coverage-XXXXXX");
    if (!::mkdtemp(tmpl.data())) throw InputError("coverage", "cannot create a temporary folder");
    dir = tmpl;
  }
  c.out_dir = dir;
  const int status = RunCampaign(c);
  CampaignStats s;
  const nlohmann::json j = ReadJsonFile(dir + "/summary.json");
  s.rule_fires = j.value("rule_fires", std::map<std::string, int64_t>{});
  if (auto e = j.find("engine_fusions"); e != j.end()) EngineFusionsFromJson(*e, &s);
  if (o.out.empty()) std::filesystem::remove_all(dir);
  if (o.json) {
    nlohmann::json out = EngineFusionsJson(s);
    std::cout << (out.is_null() ? "null" : out.dump(1)) << "\n";
  } else if (s.engine_fusions.empty()) {
    std::cout << "target '" << o.target << "' declares no fusions (hello \"fusions\" or "
              << "\"rules\"); rewrites per rule:\n";
    for (const auto& [rule, n] : s.rule_fires) std::cout << "  " << rule << " " << n << "\n";
  } else {
    std::cout << EngineFusionsMarkdown(s);
  }
  // Findings are the campaign's business (kept with --out); this command counts fusions.
  return status == 2 ? 2 : 0;
}

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
  cmd->add_option("--target", o->target,
                  "engine coverage instead: run a campaign on this target and print which of "
                  "its declared fusions fired");
  cmd->add_option("--seconds", o->seconds, "with --target: campaign seconds (default 60)")
      ->check(kPositiveNumber);
  cmd->add_flag("--quant", o->quant, "with --target: quantized (QDQ) graphs");
  cmd->add_option("--timeout", o->timeout, "with --target: seconds per case (default 10)")
      ->check(kPositiveNumber);
  cmd->add_option("--jobs", o->jobs, "with --target: worker processes (default 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("-o,--out", o->out,
                  "with --target: keep the campaign's folder here (default: a temporary one, "
                  "removed)");
  cmd->callback([o, cmd, &cli] {
    GenConfig cfg;
    if (!o->config.empty()) cfg = ConfigFromJson(ReadJsonFile(o->config), o->config);
    if (!o->target.empty()) {
      cli.exit_code = EngineCoverage(*o, cfg, cmd, cli.command_line);
      return;
    }
    for (const char* engine_only : {"--seconds", "--quant", "--timeout", "--jobs", "--out"}) {
      if (cmd->count(engine_only)) {
        throw InputError(engine_only, "needs --target (engine coverage)");
      }
    }
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
