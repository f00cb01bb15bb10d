// `fusefuzz run GRAPH.json [--inputs T.json | --seed S] [--output OUT.json] [--engine E |
// --target T] ...`
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "generators/seeded_inputs.h"
#include "harness/check.h"
#include "ir/json_io.h"
#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "targets/rule_names.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

struct RunOptions {
  std::string graph;
  std::string inputs;
  uint64_t seed = 1;
  std::string output;
  std::string engine = "reference";
  int threads = 1;
  bool plain = false;
  OptimizeOptions opt;
  std::string target;  // --target: check the graph on it (unoptimized and optimized)
  TargetSettings settings;
  OracleOptions oracle;
  std::string oracle_kind;
};

// "y: [1,8,4,4] min -1.25 max 3.5 mean 0.125 nan 0 inf 0"
void PrintSummary(const std::string& name, const Tensor& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nan = 0, inf = 0, finite = 0;
  for (float v : t.data) {
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else {
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
      sum += v;
      ++finite;
    }
  }
  std::printf("%s: %s min %.6g max %.6g mean %.6g nan %lld inf %lld\n", name.c_str(),
              ShapeToString(t.shape).c_str(), finite ? lo : NAN, finite ? hi : NAN,
              finite ? sum / static_cast<double>(finite) : NAN, static_cast<long long>(nan),
              static_cast<long long>(inf));
}

void PrintOutcome(const char* run, const CaseOutcome& o) {
  std::printf("%s run: %s", run, std::string(VerdictName(o.verdict)).c_str());
  if (o.run.status != RunStatus::kOk) {
    std::printf(" (%s)\n", o.run.message.c_str());
    return;
  }
  const WorstElement& w = o.oracle.worst;
  if (!w.output.empty()) {
    std::printf(", worst element %s[%lld]: reference %.9g, target %.9g, ratio %.3g",
                w.output.c_str(), static_cast<long long>(w.index), w.reference, w.candidate,
                w.ratio);
  }
  std::printf("\n");
}

// `run --target T`: the graph on any target, judged as a campaign would judge it. Exit status 1
// when either run is a finding.
int RunOnTarget(const RunOptions& o, const Graph& g, const TensorMap& inputs, TensorMap* outputs) {
  std::unique_ptr<Target> target = MakeTarget(o.target, o.settings);
  CheckRuleNames(target->caps(), o.opt);
  CheckOptions check;
  check.oracle = o.oracle;
  check.opt = o.opt;
  check.threads = o.threads;
  const RefTensorMap ref = RunReference(g, inputs);
  CaseOutcome plain = RunAndJudge(*target, g, inputs, ref, check, false, check.opt);
  PrintOutcome("unoptimized", plain);
  CaseOutcome fused = RunAndJudge(*target, g, inputs, ref, check, true, check.opt);
  PrintRewrites(fused.run.rewrites);
  PrintOutcome("optimized", fused);
  *outputs = fused.run.outputs;
  return plain.finding() || fused.finding() ? 1 : 0;
}

}  // namespace

void RegisterRun(Cli& cli) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = cli.app.add_subcommand("run", "Run a graph and write/print its outputs");
  cmd->add_option("graph", o->graph, "graph JSON file")->required();
  auto* in = cmd->add_option("--inputs", o->inputs, "tensors JSON file with every graph input");
  cmd->add_option("--seed", o->seed, "generate inputs from this seed")
      ->capture_default_str()
      ->excludes(in)
      ->check(kSeed);
  cmd->add_option("-o,--output", o->output, "write the output tensors to this JSON file");
  cmd->add_option("--engine", o->engine,
                  "reference (double, default) | fast (float32 kernels) | optimized (embedded "
                  "optimizer, then fast kernels)")
      ->check(CLI::IsMember({"reference", "fast", "optimized"}));
  cmd->add_option("--threads", o->threads, "threads of the fast kernels")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--target", o->target,
                  "check the graph on this target (embedded, pytorch:MODE, onnxruntime:LEVEL, "
                  "exec:CMD): unoptimized and optimized run, each judged against the reference; "
                  "-o writes the optimized run's outputs; exit 1 on a finding");
  cmd->add_option("--timeout", o->settings.timeout_seconds,
                  "seconds per run for an external target")
      ->check(kPositiveNumber);
  AddOracleOptions(*cmd, o->oracle, o->oracle_kind);
  cmd->add_flag("--plain", o->plain, "write data arrays instead of exact base64");
  AddOptimizerOptions(*cmd, o->opt);
  cmd->callback([o, &cli] {
    ResolveOracleKind(o->oracle, o->oracle_kind);
    Graph g = ReadGraphFile(o->graph);
    TensorMap inputs = o->inputs.empty() ? InputsFromSeed(g, o->seed) : ReadTensorsFile(o->inputs);
    // Here, while the file's name is known: a missing, misshapen or extra tensor names it.
    if (!o->inputs.empty()) CheckTensorsForGraph(g, inputs, o->inputs);
    TensorMap outputs;
    if (!o->target.empty()) {
      cli.exit_code = RunOnTarget(*o, g, inputs, &outputs);
    } else if (o->engine == "reference") {
      for (auto& [name, t] : RunReference(g, inputs)) outputs[name] = ToFloatTensor(t);
    } else {
      if (o->engine == "optimized") {
        OptimizeResult r = Optimize(g, o->opt);
        PrintRewrites(r.rewrites);
        g = std::move(r.graph);
      }
      outputs = RunFast(g, inputs, FastOptions{o->threads});
    }
    for (const auto& [name, t] : outputs) PrintSummary(name, t);
    if (!o->output.empty()) {
      WriteOptions w;
      w.plain = o->plain;
      MakeParentFolders(o->output);
      WriteFileAtomic(o->output, WriteTensors(outputs, w));
    }
  });
}

void AddOptimizerOptions(CLI::App& cmd, OptimizeOptions& opts) {
  // One value per flag (repeat the flag or give a comma list): a vector option that takes any
  // number of values would swallow the positional file that follows it
  // (`run --inject through-activation graph.json`).
  auto list = [&](const char* name, std::vector<std::string>& v, const char* help) {
    cmd.add_option(name, v, help)->delimiter(',')->allow_extra_args(false)->type_name("NAME,...");
  };
  list("--pipeline", opts.pipeline, "rules in this order instead of the default pipeline");
  list("--disable", opts.disable, "remove these rules from the pipeline");
  list("--only", opts.only, "keep only these rules");
  list("--inject", opts.inject, "deliberately wrong rule variants (see `fusefuzz list faults`)");
  cmd.add_option("--bisect-limit", opts.bisect_limit, "apply only the first N rewrites (-1: all)")
      ->capture_default_str();
}

void MakeParentFolders(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
}

void PrintRewrites(const std::vector<Rewrite>& rewrites) {
  for (const auto& r : rewrites) {
    std::string nodes;
    for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    std::printf("REWRITE: (%d) %s at %s\n", r.index, r.rule.c_str(), nodes.c_str());
  }
}

}  // namespace fusefuzz
