// `fusefuzz compare GRAPH|REPRO --outputs OUT [--inputs T.json | --inputs-pb DIR | --seed S]`:
// judges outputs computed elsewhere (e.g. by ONNX Runtime on an exported model) against the
// reference with the oracle. OUT is a tensors JSON file or a backend-test folder holding
// output_<i>.pb. Exit status 0 pass, 1 mismatch (or mistrusted), 2 bad input.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli.h"
#include "cli/graph_or_repro.h"
#include "ir/json_io.h"
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
      ->excludes(pb);
  AddOracleOptions(*cmd, o->oracle, o->oracle_kind);
  cmd->callback([o, &cli] {
    ResolveOracleKind(o->oracle, o->oracle_kind);
    LoadedCase c = LoadGraphOrRepro(o->input, o->inputs, o->seed);
    if (!o->inputs_pb.empty()) {
      c.inputs = ReadBackendTestData(o->inputs_pb, InputNames(c.graph), "input");
    }
    TensorMap candidate = std::filesystem::is_directory(o->outputs)
                              ? ReadBackendTestData(o->outputs, c.graph.outputs, "output")
                              : ReadTensorsFile(o->outputs);
    OracleResult r = Compare(c.graph, RunReference(c.graph, c.inputs), candidate, o->oracle);
    std::printf("%s: %s (%s)\n", o->input.c_str(), std::string(VerdictName(r.verdict)).c_str(),
                r.detail.c_str());
    cli.exit_code = r.verdict == Verdict::kPass ? 0 : 1;
  });
}

}  // namespace fusefuzz
