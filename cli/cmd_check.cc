// `fusefuzz check MODEL.onnx|GRAPH.json [--target T] [--inputs F | --seed S --samples N]
// [--out DIR]`: a whole model on a target against the reference (campaign/model_check.h).
#include <cstdio>
#include <memory>
#include <string>

#include "campaign/model_check.h"
#include "cli/cli.h"
#include "ir/json_io.h"
#include "onnx/import.h"
#include "targets/rule_names.h"

namespace fusefuzz {
namespace {

struct CheckCliOptions {
  std::string model;
  std::string inputs;
  std::string target = "embedded";
  TargetSettings settings;
  std::string oracle;
  bool no_minimize = false;
  bool quiet = false;
  ModelCheckOptions m;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void RegisterCheck(Cli& cli) {
  auto o = std::make_shared<CheckCliOptions>();
  o->m.out_dir = DefaultOut("check");
  auto* cmd = cli.app.add_subcommand(
      "check",
      "Check a whole model (ONNX or graph JSON) on a target; shrink a failure to its culprit");
  cmd->add_option("model", o->model, "the model: MODEL.onnx (imported) or GRAPH.json")->required();
  cmd->add_option("--target", o->target, "embedded | pytorch:MODE | onnxruntime:LEVEL | exec:CMD")
      ->capture_default_str();
  // A whole model, not a small generated graph: ResNet-18 (46 MB of weights) takes ONNX Runtime
  // 10-25 s per request on a loaded 2-core machine, so the campaign's 10 s would make a healthy
  // model a TIMEOUT finding.
  o->settings.timeout_seconds = 300;
  cmd->add_option("--timeout", o->settings.timeout_seconds,
                  "seconds per run for an external target (a whole model: larger than fuzz's)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  auto* in = cmd->add_option("--inputs", o->inputs, "tensors JSON file with every model input");
  cmd->add_option("--seed", o->m.seed, "seed of the first input sample (sample i: seed + i)")
      ->capture_default_str()
      ->excludes(in);
  cmd->add_option("--samples", o->m.samples, "input samples (top-1/top-5 agreement over them)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str()
      ->excludes(in);
  cmd->add_option("-o,--out", o->m.out_dir, "finding folders go to OUT/findings/")
      ->capture_default_str();
  cmd->add_flag("--no-minimize", o->no_minimize, "write the whole model as the finding");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines on stderr");
  cmd->add_option("--minimize-budget", o->m.minimize_budget, "seconds to shrink a finding")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  AddOptimizerOptions(*cmd, o->m.check.opt);
  AddOracleOptions(*cmd, o->m.check.oracle, o->oracle);
  // A whole model is judged by the sigma oracle by default: on a deep net with random weights the
  // bound oracle's magnitude term grows past the outputs themselves and it can only answer
  // MISTRUSTED, and allclose's fixed tolerances raise false alarms (docs/check.md).
  o->m.check.oracle.kind = OracleKind::kSigma;
  cmd->get_option("--oracle")->default_str("sigma");
  cmd->callback([o, &cli] {
    ExitOnInterrupt();
    ModelCheckOptions m = o->m;
    ResolveOracleKind(m.check.oracle, o->oracle);
    m.minimize = !o->no_minimize;
    Graph g = EndsWith(o->model, ".json") ? ReadGraphFile(o->model) : ImportOnnxFile(o->model);
    TensorMap inputs;
    if (!o->inputs.empty()) {
      inputs = ReadTensorsFile(o->inputs);
      CheckTensorsForGraph(g, inputs, o->inputs);
    }
    std::unique_ptr<Target> target = MakeTarget(o->target, o->settings);
    CheckRuleNames(target->caps(), m.check.opt);
    std::printf("%s: %zu nodes, target %s, oracle %s\n", o->model.c_str(), g.nodes.size(),
                target->spec().c_str(), OracleDescription(m.check.oracle).c_str());
    std::fflush(stdout);  // before minutes of work, also when stdout is a pipe
    m.progress = !o->quiet;
    ModelCheckResult r = CheckModel(*target, g, inputs, m);
    std::printf("%s", ModelCheckText(r, m.out_dir).c_str());
    // A model the target declined was not checked: like bad input, exit 2.
    cli.exit_code = r.finding ? 1 : !r.unsupported.empty() ? 2 : 0;
  });
}

}  // namespace fusefuzz
