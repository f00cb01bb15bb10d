// `fusefuzz export GRAPH|REPRO --onnx OUT.onnx [--inputs-pb DIR] [--inputs T.json | --seed S]`:
// the graph as an ONNX model (docs/onnx.md), and its inputs with the reference outputs as
// TensorProto files in ONNX's backend-test layout.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/graph_or_repro.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "onnx/validate.h"

namespace fusefuzz {
namespace {

struct ExportOptions {
  std::string input;
  std::string onnx;
  std::string inputs_pb;
  std::string inputs;
  uint64_t seed = 1;
  bool no_check = false;
};

}  // namespace

void RegisterExport(Cli& cli) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = cli.app.add_subcommand(
      "export", "Write a graph or reproducer as an ONNX model (opset 17) with backend-test data");
  cmd->add_option("input", o->input, "graph JSON or reproducer JSON")->required();
  cmd->add_option("--onnx", o->onnx, "write the ONNX model here")->required();
  cmd->add_option("--inputs-pb", o->inputs_pb,
                  "also write DIR/test_data_set_0/input_<i>.pb and output_<i>.pb (reference "
                  "outputs rounded to float32)");
  auto* in = cmd->add_option("--inputs", o->inputs,
                             "tensors JSON file with the inputs (default: the reproducer's, or "
                             "generated from --seed)");
  cmd->add_option("--seed", o->seed, "generate inputs from this seed (default 1)")
      ->excludes(in)
      ->check(kSeed);
  cmd->add_flag("--no-check", o->no_check, "skip libonnx's checker and shape inference");
  cmd->callback([o, &cli] {
    LoadedCase c = LoadGraphOrRepro(o->input, o->inputs, o->seed);
    // The model usually goes into the backend-test folder itself (DIR/model.onnx).
    std::filesystem::path parent = std::filesystem::path(o->onnx).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) throw InputError(parent.string(), "cannot create folder: " + ec.message());
    OnnxExportOptions opts;
    // The file name only: the path as typed on this machine (a home folder, a user name) is no
    // business of whoever the model is sent to.
    opts.doc = "exported by fusefuzz from " + std::filesystem::path(o->input).filename().string();
    OnnxModel m = ExportOnnx(c.graph, opts);
    const bool shape_inference = !PoolShapesPredateLibonnx(c.graph);
    // libonnx 1.12 knows opsets <= 17: an opset-19 model is validated by running it in ONNX
    // Runtime instead (tests/onnx_opset19.sh), not here.
    const bool checkable = LibonnxKnowsOpset(m.opset);
    if (!o->no_check && checkable) {
      if (std::string why = CheckOnnxModel(m.bytes, shape_inference); !why.empty()) {
        // Our own export is wrong: not the user's input. Still written, for inspection.
        WriteFileAtomic(o->onnx, m.bytes);
        std::cerr << "fusefuzz: error: " << o->onnx
                  << ": libonnx rejects the exported model: " << why << "\n";
        cli.exit_code = 1;
        return;
      }
    }
    TensorMap outputs;
    if (!o->inputs_pb.empty()) {
      for (auto& [name, t] : RunReference(c.graph, c.inputs)) outputs[name] = ToFloatTensor(t);
    }
    // A model this command created is removed again when the test data cannot be written (a
    // full disk leaves neither model.onnx nor an empty test_data_set_0/; WriteBackendTestData
    // removes the folder it created).
    std::error_code exists_ec;
    const bool model_existed = std::filesystem::symlink_status(o->onnx, exists_ec).type() !=
                               std::filesystem::file_type::not_found;
    WriteFileAtomic(o->onnx, m.bytes);
    if (!o->inputs_pb.empty()) {
      try {
        WriteBackendTestData(o->inputs_pb, c.graph, c.inputs, outputs);
      } catch (const InputError&) {
        if (!model_existed) ::unlink(o->onnx.c_str());
        throw;
      }
    }
    size_t decompositions = 0;
    for (const auto& [key, value] : m.metadata) {
      decompositions += key.rfind("fusefuzz:decomposition:", 0) == 0;
    }
    std::printf(
        "%s: ONNX opset %d, %zu input(s), %zu output(s), %zu decomposition(s)%s\n", o->onnx.c_str(),
        m.opset, m.input_names.size(), m.output_names.size(), decompositions,
        o->no_check  ? ""
        : !checkable ? ", libonnx checker skipped (libonnx 1.12 knows opsets up to 17; run the "
                       "model in ONNX Runtime to validate it, docs/onnx.md)"
        : shape_inference
            ? ", libonnx checker and shape inference: ok"
            : ", libonnx checker: ok (shape inference skipped: a ceil_mode pool drops a "
              "window starting in the padding, which libonnx 1.12 does not know)");
  });
}

}  // namespace fusefuzz
