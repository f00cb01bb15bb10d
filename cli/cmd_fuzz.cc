// `fusefuzz fuzz`: the campaign (see campaign/campaign.h).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "campaign/finding_filing.h"
#include "cli/cli.h"
#include "generators/gen_config.h"
#include "generators/generator.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "optimizer/optimizer.h"
#include "targets/kernel_notes.h"

namespace fusefuzz {
namespace {

struct FuzzOptions {
  CampaignOptions c;
  std::string oracle;
  std::string config;
  bool no_minimize = false;
  bool quant = false;
  bool quiet = false;
  bool no_kernel_check = false;
  bool no_sensitivity_check = false;
  std::string known;
  std::string shard;
};

// An injected fault that never fires on the chosen generator's graphs turns a campaign into a
// pass that tests nothing (issue 45, item 10: `--inject relu-zero-point-ignored` without --quant
// ran 200 float graphs and exited 0). The first kProbeCases cases of the campaign are generated
// and optimized with the faults (no run, a fraction of a second); a fault that fired in none is
// refused, naming what would let it fire (--quant, when the quantized generator's graphs do).
constexpr int64_t kProbeCases = 200;

int64_t FaultFires(const std::string& fault, const CampaignOptions& c, const GenConfig& gen) {
  OptimizeOptions opt = c.check.opt;
  opt.inject = {fault};
  int64_t fires = 0;
  for (int64_t i = 0; i < kProbeCases && fires == 0; ++i) {
    const GeneratedCase g = GenerateFromSeed(CaseSeed(c.seed, i), gen);
    for (const Rewrite& rw : Optimize(g.graph, opt).rewrites) fires += rw.rule == fault;
  }
  return fires;
}

void RefuseFaultsThatCannotFire(const CampaignOptions& c) {
  if (c.target != "embedded") return;  // an external target's faults are its own
  for (const std::string& fault : c.check.opt.inject) {
    if (FaultFires(fault, c, c.gen) > 0) continue;
    std::string fix;
    GenConfig other = c.gen;
    other.quant.enabled = !c.gen.quant.enabled;
    if (FaultFires(fault, c, other) > 0) {
      fix = c.gen.quant.enabled
                ? "drop --quant (it corrupts a float rule, whose pattern the quantized generator "
                  "does not build)"
                : "add --quant (it corrupts a quantized rule)";
    }
    if (fix.empty()) {
      fix =
          "enable the generator classes its pattern needs in --config (`fusefuzz gen "
          "--dump-config`; docs/faults.md names each fault's pattern)";
    }
    throw InputError("--inject " + fault,
                     "the fault never fired in the first " + std::to_string(kProbeCases) +
                         " graphs of this generator, so the campaign would pass without "
                         "testing it: " +
                         fix);
  }
}

}  // namespace

void RegisterFuzz(Cli& cli) {
  auto o = std::make_shared<FuzzOptions>();
  auto* cmd = cli.app.add_subcommand(
      "fuzz", "Generate graphs, check them on a target, report fusions that change numerics");
  cmd->add_option("--seconds", o->c.seconds,
                  "stop after this many seconds (with neither --seconds nor --graphs: "
                  "60 seconds)")
      ->check(kPositiveNumber);
  cmd->add_option("--graphs", o->c.graphs,
                  "stop after this many graphs (with --seconds too: whichever comes first)")
      ->check(kPositiveNumber);
  cmd->add_option("--seed", o->c.seed, "base seed (case I is `fusefuzz gen --seed SEED --case I`)")
      ->capture_default_str()
      ->check(kSeed);
  cmd->add_option("-j,--jobs", o->c.jobs, "worker processes")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--target", o->c.target,
                  "embedded | onnxruntime[@VERSION]:LEVEL | pytorch:MODE | xnnpack:MODE | "
                  "armnn:MODE | opencv:MODE | mlir:MODE | exec:CMD (`fusefuzz list targets`)")
      ->capture_default_str();
  cmd->add_option("--timeout", o->c.target_settings.timeout_seconds,
                  "seconds per case for an external target")
      ->check(kPositiveNumber)
      ->capture_default_str();
  cmd->add_option("--case-timeout", o->c.case_timeout,
                  "seconds before a stuck worker is killed (the case becomes a TIMEOUT finding)")
      ->check(kPositiveNumber)
      ->capture_default_str();
  cmd->add_option("--batch", o->c.batch,
                  "cases per target call for targets with the capability batch (default: what "
                  "the target suggests; 1 = one per call); a case that fails in a batch is "
                  "checked again alone before it is filed")
      ->check(CLI::Range(1, 256));
  AddOptimizerOptions(*cmd, o->c.check.opt);
  AddOracleOptions(*cmd, o->c.check.oracle, o->oracle);
  cmd->add_option("--config", o->config,
                  "generator config JSON (see `fusefuzz gen --dump-config`)");
  cmd->add_flag("--quant", o->quant,
                "quantized (QDQ) graphs: the quantized generator (docs/generator.md); the same "
                "as \"quant\": {\"enabled\": true} in --config");
  cmd->add_option("-o,--out", o->c.out_dir, "output folder")->capture_default_str();
  cmd->add_flag("--no-minimize", o->no_minimize, "do not minimize new findings");
  cmd->add_option("--minimize-budget", o->c.minimize_budget, "seconds per finding")
      ->check(kPositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--no-kernel-check", o->no_kernel_check,
                "skip the unoptimized run (faster; kernel bugs then look like fusion bugs)");
  cmd->add_flag("--no-sensitivity-check", o->no_sensitivity_check,
                "file fusion mismatches without first rerunning the unoptimized kernels on "
                "inputs within rounding (docs/campaign.md, Kernel sensitivity)");
  cmd->add_option("--known", o->known,
                  "baseline: a summary.json (or campaign folder) or a file of signatures; "
                  "matching findings are counted as known, not new, and get no folder. It adds "
                  "to a built-in target's known upstream bugs (corpus/known, folders marked "
                  "'known upstream'); `--known none` turns those off");
  cmd->add_option("--junit", o->c.junit, "also write JUnit XML here");
  cmd->add_option("--threads", o->c.check.threads, "threads of the fast kernels per worker")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "no status line");
  cmd->add_option("--shard", o->shard,
                  "I/N: check only the cases k with k mod N == I (0 <= I < N) of the campaign of "
                  "this --graphs and --seed; `fusefuzz merge` joins the N shards' folders");
  auto* resume = cmd->add_flag(
      "--resume", o->c.resume,
      "continue the campaign in a non-empty --out: keep its findings, skip its cases, extend its "
      "counts");
  cmd->add_flag("--force", o->c.force,
                "start over in a non-empty --out: delete its findings and summary first")
      ->excludes(resume);
  cmd->callback([o, &cli] {
    CampaignOptions c = o->c;
    ResolveOracleKind(c.check.oracle, o->oracle);
    if (!o->config.empty()) c.gen = ConfigFromJson(ReadJsonFile(o->config), o->config);
    if (o->quant) c.gen.quant.enabled = true;
    c.minimize = !o->no_minimize;
    c.check.kernel_check = !o->no_kernel_check;
    c.sensitivity_check = !o->no_sensitivity_check;
    if (o->known == "none") {
      c.upstream_baseline = false;
    } else if (!o->known.empty()) {
      c.known = ReadKnownSignatures(o->known);
    }
    c.status = !o->quiet;
    c.command_line = cli.command_line;
    if (!o->shard.empty()) {
      ParseShard(o->shard, &c.shard, &c.shards);
      c.sharded = true;
    }
    if (c.seconds <= 0 && c.graphs <= 0) c.seconds = 60;
    RefuseFaultsThatCannotFire(c);
    if (c.gen.quant.enabled) {
      if (auto note = QuantKernelNote(c.target))
        std::fprintf(stderr, "fuzz: note: %s\n", note->c_str());
    }
    cli.exit_code = RunCampaign(c);
  });
}

}  // namespace fusefuzz
