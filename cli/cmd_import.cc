// `fusefuzz import MODEL.onnx -o GRAPH.json [--plain]`: an ONNX model made of ops of fusefuzz's
// vocabulary as a graph JSON (docs/onnx.md, "Import").
#include <cstdio>
#include <memory>

#include "cli/cli.h"
#include "ir/json_io.h"
#include "onnx/import.h"

namespace fusefuzz {
namespace {

struct ImportOptions {
  std::string model;
  std::string output;
  bool plain = false;
};

}  // namespace

void RegisterImport(Cli& cli) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = cli.app.add_subcommand("import", "Convert an ONNX model to a graph JSON");
  cmd->add_option("model", o->model, "ONNX model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output, "write the graph JSON here")->required();
  cmd->add_flag("--plain", o->plain, "data arrays instead of base64");
  cmd->callback([o] {
    Graph g = ImportOnnxFile(o->model);
    WriteOptions w;
    w.plain = o->plain;
    WriteFileAtomic(o->output, WriteGraph(g, w));
    std::printf("%s: %zu input(s), %zu node(s), %zu output(s)\n", o->output.c_str(),
                g.inputs.size(), g.nodes.size(), g.outputs.size());
  });
}

}  // namespace fusefuzz
