// `fusefuzz compare GRAPH|REPRO --outputs OUT [--inputs T.json | --inputs-pb DIR | --seed S]`:
// judges outputs computed elsewhere (e.g. by ONNX Runtime on an exported model) against the
// reference with the oracle. OUT is a tensors JSON file or a backend-test folder holding
// output_<i>.pb. Exit status 0 pass, 1 mismatch (or mistrusted), 2 bad input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli.h"
#include "cli/graph_or_repro.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"

namespace fusefuzz {
namespace {

struct CompareOptions {
  std::string input;
  std::string outputs;
  std::string inputs;
  std::string inputs_pb;
  uint64_t seed = 1;
  OracleOptions oracle;
  std::string oracle_kind;
};

std::vector<std::string> InputNames(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& in : g.inputs) names.push_back(in.name);
  return names;
}

}  // namespace

void RegisterCompare(Cli& cli) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = cli.app.add_subcommand(
      "compare", "Judge outputs computed elsewhere against the reference (exit 1 on mismatch)");
  cmd->add_option("input", o->input, "graph JSON or reproducer JSON")->required();
  cmd->add_option("--outputs", o->outputs,
                  "the candidate outputs: a tensors JSON file, or a folder with output_<i>.pb "
                  "in the order of the graph outputs")
      ->required();
  auto* in = cmd->add_option("--inputs", o->inputs, "tensors JSON file with the inputs");
  auto* pb = cmd->add_option("--inputs-pb", o->inputs_pb,
                             "folder with input_<i>.pb (a backend-test data set)")
                 ->excludes(in);
  cmd->add_option("--seed", o->seed, "generate inputs from this seed (default 1)")
      ->excludes(in)
      ->excludes(pb)
      ->check(kSeed);
  AddOracleOptions(*cmd, o->oracle, o->oracle_kind);
  cmd->callback([o, &cli] {
    ResolveOracleKind(o->oracle, o->oracle_kind);
    LoadedCase c = LoadGraphOrRepro(o->input, o->inputs, o->seed);
    const ShapeMap shapes = VerifyGraph(c.graph);
    if (!o->inputs_pb.empty()) {
      std::vector<Shape> in_shapes;
      for (const auto& in : c.graph.inputs) in_shapes.push_back(in.shape);
      c.inputs = ReadBackendTestData(o->inputs_pb, InputNames(c.graph), "input", &in_shapes);
    }
    // A candidate that lacks an output, has one the graph does not, or has another shape is
    // bad input (exit 2), not a mismatch of the target: every error names the file.
    std::vector<Shape> out_shapes;
    for (const auto& out : c.graph.outputs) out_shapes.push_back(shapes.at(out));
    std::error_code ec;
    TensorMap candidate;
    if (std::filesystem::is_directory(o->outputs, ec)) {
      candidate = ReadBackendTestData(o->outputs, c.graph.outputs, "output", &out_shapes);
    } else {
      candidate = ReadTensorsFile(o->outputs);
      for (size_t i = 0; i < c.graph.outputs.size(); ++i) {
        auto it = candidate.find(c.graph.outputs[i]);
        if (it == candidate.end()) {
          throw InputError(o->outputs, "no tensor for graph output '" + c.graph.outputs[i] + "'");
        }
        if (it->second.shape != out_shapes[i]) {
          throw InputError(o->outputs + ": /" + c.graph.outputs[i],
                           "shape " + ShapeToString(it->second.shape) +
                               " does not match the graph's " + ShapeToString(out_shapes[i]));
        }
      }
      for (const auto& [name, t] : candidate) {
        if (!shapes.count(name) || std::find(c.graph.outputs.begin(), c.graph.outputs.end(),
                                             name) == c.graph.outputs.end()) {
          throw InputError(o->outputs + ": /" + name, "not an output of the graph");
        }
      }
    }
    OracleResult r = Compare(c.graph, RunReference(c.graph, c.inputs), candidate, o->oracle);
    std::printf("%s: %s (%s)\n", o->input.c_str(), std::string(VerdictName(r.verdict)).c_str(),
                r.detail.c_str());
    cli.exit_code = r.verdict == Verdict::kPass ? 0 : 1;
  });
}

}  // namespace fusefuzz
