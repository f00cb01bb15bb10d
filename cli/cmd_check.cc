// `fusefuzz check MODEL.onnx|GRAPH.json [--target T]... [--inputs F | --seed S --samples N]
// [--out DIR] [--json FILE] [--save-inputs DIR] [--save-outputs DIR]`: a whole model on a target
// against the reference (campaign/model_check.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "campaign/model_check.h"
#include "cli/cli.h"
#include "ir/closest_name.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "onnx/import.h"
#include "report/finding_report.h"
#include "report/layerwise_report.h"
#include "targets/kernel_notes.h"
#include "targets/rule_names.h"

namespace fusefuzz {
namespace {

struct CheckCliOptions {
  std::string model;
  std::string inputs;
  std::vector<std::string> targets;
  std::string json_out, save_inputs, save_outputs;
  TargetSettings settings;
  std::string oracle;
  std::vector<std::string> tolerances;  // OUTPUT=VALUE
  bool no_minimize = false;
  bool quiet = false;
  ModelCheckOptions m;
};

// `--tolerance OUTPUT=VALUE`: that graph output's limit in the oracle's units (oracle.h,
// OracleOptions::output_tolerance). A name that is not a graph output, or a VALUE that is not
// a positive number (an integer for the ulp oracle), is exit 2.
void ParseTolerances(const std::vector<std::string>& specs, const Graph& g, OracleOptions* o) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--tolerance " + spec, "expected OUTPUT=VALUE (e.g. logits=12)");
    }
    const std::string name = spec.substr(0, eq), text = spec.substr(eq + 1);
    if (std::find(g.outputs.begin(), g.outputs.end(), name) == g.outputs.end()) {
      std::string list;
      for (const std::string& out : g.outputs) list += (list.empty() ? "" : ", ") + out;
      throw InputError("--tolerance " + spec, "'" + name + "' is not an output of the model" +
                                                  DidYouMean(name, g.outputs) +
                                                  "; its outputs: " + list);
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
      throw InputError("--tolerance " + spec,
                       "VALUE must be a positive number, got '" + text + "'");
    }
    if (o->kind == OracleKind::kUlp && v != std::floor(v)) {
      throw InputError("--tolerance " + spec, "the ulp oracle's VALUE is a whole number of ulps");
    }
    o->output_tolerance[name] = v;
  }
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Each pair of targets on each sample and output: the largest difference of their optimized
// outputs, absolute and relative to the larger magnitude (Polygraphy's "compare runners").
std::string CrossTargetText(const std::vector<std::string>& specs,
                            const std::vector<ModelCheckResult>& results, nlohmann::json* pairs) {
  std::ostringstream s;
  char buf[512];
  s << "between targets (optimized outputs):\n";
  for (size_t a = 0; a < results.size(); ++a) {
    for (size_t b = a + 1; b < results.size(); ++b) {
      nlohmann::json pair = {
          {"a", specs[a]}, {"b", specs[b]}, {"outputs", nlohmann::json::array()}};
      const size_t n = std::min(results[a].samples.size(), results[b].samples.size());
      for (size_t i = 0; i < n; ++i) {
        const TensorMap& x = results[a].samples[i].optimized.run.outputs;
        const TensorMap& y = results[b].samples[i].optimized.run.outputs;
        for (const auto& [name, tx] : x) {
          auto ty = y.find(name);
          if (ty == y.end() || ty->second.shape != tx.shape) continue;
          double max_abs = 0, max_rel = 0;
          int64_t at = -1;
          for (size_t k = 0; k < tx.data.size(); ++k) {
            const double d = std::fabs(double(tx.data[k]) - double(ty->second.data[k]));
            const double mag =
                std::max(std::fabs(double(tx.data[k])), std::fabs(double(ty->second.data[k])));
            if (!(d <= max_abs)) max_abs = d, at = static_cast<int64_t>(k);
            if (mag > 0) max_rel = std::max(max_rel, d / mag);
          }
          if (at < 0) {  // no element differs: there is no "where"
            std::snprintf(buf, sizeof buf, "  target %zu vs %zu, seed %llu, %s: identical\n", a + 1,
                          b + 1, static_cast<unsigned long long>(results[a].samples[i].seed),
                          name.c_str());
          } else {
            std::snprintf(buf, sizeof buf,
                          "  target %zu vs %zu, seed %llu, %s: max |a - b| %.3g (at %s), max "
                          "relative %.3g\n",
                          a + 1, b + 1, static_cast<unsigned long long>(results[a].samples[i].seed),
                          name.c_str(), max_abs, Coordinates(at, tx.shape).c_str(), max_rel);
          }
          s << buf;
          pair["outputs"].push_back({{"seed", results[a].samples[i].seed},
                                     {"output", name},
                                     {"max_abs", max_abs},
                                     {"max_relative", max_rel},
                                     {"index", at}});
        }
      }
      pairs->push_back(std::move(pair));
    }
  }
  return s.str();
}

void SaveTensors(const std::string& inputs_dir, const std::string& outputs_dir,
                 const std::vector<ModelCheckResult>& results) {
  if (results.empty()) return;
  for (const SampleCheck& sc : results[0].samples) {
    const std::string seed = std::to_string(sc.seed);
    if (!inputs_dir.empty()) {
      WriteFileInFolder(inputs_dir, "inputs-seed" + seed + ".json", WriteTensors(sc.inputs));
    }
    if (!outputs_dir.empty()) {
      WriteFileInFolder(outputs_dir, "reference-seed" + seed + ".json", WriteTensors(sc.reference));
    }
  }
  if (outputs_dir.empty()) return;
  for (size_t t = 0; t < results.size(); ++t) {
    for (const SampleCheck& sc : results[t].samples) {
      const std::string name =
          "target" + std::to_string(t + 1) + "-seed" + std::to_string(sc.seed) + ".json";
      WriteFileInFolder(outputs_dir, name, WriteTensors(sc.optimized.run.outputs));
      WriteFileInFolder(outputs_dir,
                        "target" + std::to_string(t + 1) + "-unoptimized-seed" +
                            std::to_string(sc.seed) + ".json",
                        WriteTensors(sc.plain.run.outputs));
    }
  }
}

// `--layers`: each sample's layer table as markdown and as an SVG bar chart, beside the
// finding folders (`target<T>-` in front when several targets are checked).
void WriteLayerTables(const ModelCheckResult& r, const std::string& out_dir, size_t target,
                      const std::string& model, bool say) {
  if (out_dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "cannot create the folder: " + ec.message());
  const std::string prefix = target > 0 ? "target" + std::to_string(target) + "-" : "";
  for (const SampleCheck& sc : r.samples) {
    if (!sc.layers) continue;
    const std::string name = prefix + "layers-seed" + std::to_string(sc.seed);
    WriteFileInFolder(out_dir, name + ".md",
                      "# " + model + ", sample seed " + std::to_string(sc.seed) + "\n\n" +
                          LayerwiseText(*sc.layers, ""));
    WriteFileInFolder(out_dir, name + ".svg",
                      LayerwiseSvg(*sc.layers, std::filesystem::path(model).filename().string()));
    if (say)
      std::fprintf(stderr, "check: layer table: %s/%s.{md,svg}\n", out_dir.c_str(), name.c_str());
  }
}

}  // namespace

void RegisterCheck(Cli& cli) {
  auto o = std::make_shared<CheckCliOptions>();
  o->m.out_dir = DefaultOut("check");
  auto* cmd = cli.app.add_subcommand(
      "check",
      "Check a whole model (ONNX or graph JSON) on a target; shrink a failure to its culprit");
  cmd->add_option("model", o->model, "the model: MODEL.onnx (imported) or GRAPH.json")->required();
  cmd->add_option("--target", o->targets,
                  "embedded | pytorch:MODE | onnxruntime:LEVEL | exec:CMD; repeat to check "
                  "several side by side (each against the reference and against each other)")
      ->default_str(EmbeddedSpecText());
  cmd->add_option("--json", o->json_out, "also write the result as JSON to this file");
  cmd->add_option("--save-inputs", o->save_inputs,
                  "write each sample's inputs to DIR/inputs-seed<S>.json (tensors JSON)");
  cmd->add_option("--save-outputs", o->save_outputs,
                  "write the reference's and each target's outputs to "
                  "DIR/{reference,target<T>}-seed<S>.json");
  // A whole model, not a small generated graph: ResNet-18 (46 MB of weights) takes ONNX Runtime
  // 10-25 s per request on a loaded 2-core machine, so the campaign's 10 s would make a healthy
  // model a TIMEOUT finding.
  o->settings.timeout_seconds = 300;
  cmd->add_option("--timeout", o->settings.timeout_seconds,
                  "seconds per run for an external target (a whole model: larger than fuzz's)")
      ->check(kPositiveNumber)
      ->capture_default_str();
  auto* in = cmd->add_option("--inputs", o->inputs, "tensors JSON file with every model input");
  cmd->add_option("--seed", o->m.seed, "seed of the first input sample (sample i: seed + i)")
      ->capture_default_str()
      ->excludes(in)
      ->check(kSeed);
  cmd->add_option("--samples", o->m.samples, "input samples (top-1/top-5 agreement over them)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str()
      ->excludes(in);
  cmd->add_option("-o,--out", o->m.out_dir, "finding folders go to OUT/findings/")
      ->capture_default_str();
  cmd->add_option("--tolerance", o->tolerances,
                  "OUTPUT=VALUE: this output's limit in the oracle's units (k for sigma and "
                  "bound, a factor on atol + rtol|r| for allclose, ulps for ulp); repeatable");
  cmd->add_flag("--no-minimize", o->no_minimize, "write the whole model as the finding");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress lines on stderr");
  cmd->add_flag("--layers", o->m.layers,
                "int8 models: judge every quantization boundary teacher-forced, from the "
                "engine's own integers before it (one more optimized run per sample); the "
                "per-layer table goes to OUT/layers-seed<S>.{md,svg}");
  cmd->add_option("--minimize-budget", o->m.minimize_budget, "seconds to shrink a finding")
      ->check(kPositiveNumber)
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
    ParseTolerances(o->tolerances, g, &m.check.oracle);
    TensorMap inputs;
    if (!o->inputs.empty()) {
      inputs = ReadTensorsFile(o->inputs);
      CheckTensorsForGraph(g, inputs, o->inputs);
    }
    const std::vector<std::string> specs =
        o->targets.empty() ? std::vector<std::string>{EmbeddedSpecText()} : o->targets;
    // Every target is made (and its rule names checked) before any runs: a typo in the second
    // one must not cost the first one's minutes.
    std::vector<std::unique_ptr<Target>> targets;
    for (const std::string& spec : specs) {
      targets.push_back(MakeTarget(spec, o->settings));
      CheckRuleNames(targets.back()->caps(), m.check.opt);
    }
    // Output files are checked before the work, too: a bad path fails at once.
    if (!o->json_out.empty()) MakeParentFolders(o->json_out);
    for (const std::string* dir : {&o->save_inputs, &o->save_outputs}) {
      std::error_code ec;
      if (!dir->empty()) std::filesystem::create_directories(*dir, ec);
      if (ec) throw InputError(*dir, "cannot create the folder: " + ec.message());
    }
    m.progress = !o->quiet;
    if (std::any_of(g.nodes.begin(), g.nodes.end(),
                    [](const Node& n) { return !n.quant.empty(); })) {
      for (const std::string& spec : specs) {
        if (auto note = QuantKernelNote(spec)) {
          std::fprintf(stderr, "check: note: %s: %s\n", spec.c_str(), note->c_str());
        }
      }
    }
    std::vector<ModelCheckResult> results;
    int exit_code = 0;
    bool any_unsupported = false, any_not_judged = false;
    for (size_t t = 0; t < targets.size(); ++t) {
      if (targets.size() > 1) std::printf("== target %zu: %s\n", t + 1, targets[t]->spec().c_str());
      std::printf("%s: %zu nodes, target %s, oracle %s\n", o->model.c_str(), g.nodes.size(),
                  targets[t]->spec().c_str(), OracleDescription(m.check.oracle).c_str());
      std::fflush(stdout);  // before minutes of work, also when stdout is a pipe
      results.push_back(CheckModel(*targets[t], g, inputs, m));
      std::printf("%s", ModelCheckText(results.back(), m.out_dir).c_str());
      std::fflush(stdout);
      if (results.back().finding || results.back().layer_finding) exit_code = 1;
      WriteLayerTables(results.back(), m.out_dir, specs.size() > 1 ? t + 1 : 0, o->model,
                       !o->quiet);
      any_unsupported |= !results.back().unsupported.empty();
      any_not_judged |= results.back().not_judged;
    }
    nlohmann::json pairs = nlohmann::json::array();
    if (targets.size() > 1) {
      std::printf("%s", CrossTargetText(specs, results, &pairs).c_str());
    }
    SaveTensors(o->save_inputs, o->save_outputs, results);
    if (!o->json_out.empty()) {
      nlohmann::json j = {{"format", "fusefuzz-check"},
                          {"version", 1},
                          {"model", o->model},
                          {"nodes", g.nodes.size()},
                          {"targets", nlohmann::json::array()},
                          {"between_targets", pairs}};
      for (size_t t = 0; t < targets.size(); ++t) {
        j["targets"].push_back(ModelCheckJson(results[t], targets[t]->spec(), m.check.oracle));
      }
      WriteFileAtomic(o->json_out, j.dump(2) + "\n");
    }
    // A model a target declined was not checked: like bad input, exit 2 (unless a finding).
    // Outputs with nothing informative are NOT JUDGED: neither a pass nor a finding, exit 3.
    cli.exit_code = exit_code == 1 ? 1 : any_unsupported ? 2 : any_not_judged ? kExitNotJudged : 0;
  });
}

}  // namespace fusefuzz
