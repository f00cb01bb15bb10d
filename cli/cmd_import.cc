// `fusefuzz import MODEL.onnx -o GRAPH.json [--plain] [--cut [--cut-inputs T.json --seed S]]`:
// an ONNX model made of ops of fusefuzz's vocabulary as a graph JSON, or with --cut its largest
// importable part (docs/onnx.md, "Import").
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli.h"
#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/import.h"
#include "targets/onnx_prefix.h"

namespace fusefuzz {
namespace {

struct ImportOptions {
  std::string model;
  std::string output;
  bool plain = false;
  bool cut = false;
  std::string cut_inputs;
  uint64_t seed = 1;
};

std::string List(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

// The values at the cut of `r`: the model's own inputs drawn from the seed, the values at the
// cut computed from them by ONNX Runtime (the model's prefix, at optimization level "disabled").
TensorMap CutInputs(const ImportOptions& o, const std::string& bytes, const CutImport& r) {
  Graph model_inputs;
  model_inputs.inputs = r.model_inputs;
  for (const ValueInfo& v : r.model_inputs) {
    bool fixed = !v.shape.empty() && v.shape.size() <= 4;
    for (int64_t d : v.shape) fixed = fixed && d >= 1;
    if (!fixed) {
      throw InputError(o.model, "graph input '" + v.name +
                                    "' has no static shape of rank 1..4: --cut-inputs cannot "
                                    "draw its values");
    }
  }
  TensorMap drawn = InputsFromSeed(model_inputs, o.seed);
  std::vector<ValueInfo> at_cut;
  for (const ValueInfo& v : r.graph.inputs) {
    for (const std::string& c : r.cut_inputs) {
      if (c == v.name) at_cut.push_back(v);
    }
  }
  TensorMap cut_values;
  if (!at_cut.empty()) {
    cut_values = OnnxRuntimeValues(bytes, o.model, r.model_inputs, drawn, at_cut);
  }
  TensorMap inputs;
  for (const ValueInfo& v : r.graph.inputs) {
    auto it = cut_values.find(v.name);
    const Tensor& t = it != cut_values.end() ? it->second : drawn.at(v.name);
    if (t.shape != v.shape) {
      throw InputError(o.model, "ONNX Runtime computed '" + v.name + "' with another shape than " +
                                    "ONNX shape inference declared");
    }
    inputs[v.name] = t;
  }
  return inputs;
}

void RunCut(const ImportOptions& o, const WriteOptions& w) {
  const std::string bytes = ReadModelFile(o.model);
  CutImport r = ImportOnnxCut(bytes, o.model);
  // Everything is computed before the first file is written: a failing --cut-inputs leaves no
  // -o file behind.
  TensorMap inputs;
  if (!o.cut_inputs.empty()) inputs = CutInputs(o, bytes, r);
  const std::string graph_text = WriteGraph(r.graph, w);
  const std::string inputs_text = o.cut_inputs.empty() ? "" : WriteTensors(inputs, w);
  std::error_code ec;
  const bool output_existed = std::filesystem::exists(o.output, ec);
  WriteFileAtomic(o.output, graph_text);
  if (!o.cut_inputs.empty()) {
    try {
      WriteFileAtomic(o.cut_inputs, inputs_text);
    } catch (...) {
      // The two files go together: a graph whose inputs at the cut could not be written is
      // not left behind as if the import had worked.
      if (!output_existed) std::filesystem::remove(o.output, ec);
      throw;
    }
  }
  std::printf("%s: kept %zu of %lld node(s): %zu input(s), %zu output(s)\n", o.output.c_str(),
              r.graph.nodes.size(), static_cast<long long>(r.model_nodes), r.graph.inputs.size(),
              r.graph.outputs.size());
  for (const std::string& d : r.dropped) std::printf("  cut off: %s\n", d.c_str());
  if (!r.cut_inputs.empty()) std::printf("  inputs at the cut: %s\n", List(r.cut_inputs).c_str());
  if (!r.cut_outputs.empty()) {
    std::printf("  outputs at the cut: %s\n", List(r.cut_outputs).c_str());
  }
  if (o.cut_inputs.empty()) return;
  std::printf("%s: %zu input(s), seed %llu (values at the cut from ONNX Runtime)\n",
              o.cut_inputs.c_str(), inputs.size(), static_cast<unsigned long long>(o.seed));
}

}  // namespace

void RegisterImport(Cli& cli) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = cli.app.add_subcommand("import", "Convert an ONNX model to a graph JSON");
  cmd->add_option("model", o->model, "ONNX model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output, "write the graph JSON here")->required();
  cmd->add_flag("--plain", o->plain, "data arrays instead of base64");
  auto* cut = cmd->add_flag("--cut", o->cut,
                            "keep the largest importable part instead of failing on an op "
                            "outside the vocabulary");
  cmd->add_option("--cut-inputs", o->cut_inputs,
                  "with --cut: write the part's inputs here (model inputs from --seed, values at "
                  "the cut computed by ONNX Runtime)")
      ->needs(cut);
  cmd->add_option("--seed", o->seed, "with --cut-inputs: seed of the model's inputs")
      ->capture_default_str()
      ->check(kSeed);
  cmd->callback([o] {
    WriteOptions w;
    w.plain = o->plain;
    if (o->cut) return RunCut(*o, w);
    OnnxImportInfo info;
    Graph g = ImportOnnxFile(o->model, {}, &info);
    WriteFileAtomic(o->output, WriteGraph(g, w));
    std::printf("%s: %zu input(s), %zu node(s), %zu output(s)\n", o->output.c_str(),
                g.inputs.size(), g.nodes.size(), g.outputs.size());
    if (info.refused > 0) {
      std::printf("import: %lld node(s) that fusefuzz's export decomposed are back as one node\n",
                  static_cast<long long>(info.refused));
    }
    if (!info.not_refused.empty()) {
      std::fprintf(stderr,
                   "import: warning: fusefuzz's decomposition records were not used, the "
                   "decompositions are imported as plain ops: %s\n",
                   info.not_refused.c_str());
    }
  });
}

}  // namespace fusefuzz
