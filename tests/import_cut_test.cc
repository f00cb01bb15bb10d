// `fusefuzz import --cut` (docs/onnx.md, "Import with --cut"): a model with an op outside the
// vocabulary keeps its largest importable part, and the values at the cut, computed by ONNX
// Runtime from the model's prefix, make that part compute what the whole model computes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "targets/builtin_targets.h"
#include "targets/onnx_prefix.h"
#include "tests/cli_util.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using testing::Fusefuzz;
using testing::TempDir;

std::string Data(int n, double step) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    s += (i ? ", " : "") + std::to_string(std::fmod(i * step, 1.0) - 0.5);
  }
  return s + "]";
}

// x -> Conv -> Gelu (erf form; ONNX opset 17 has no Gelu, so it exports as Div, Erf, Add, Mul,
// Mul) -> Conv -> BatchNorm -> Relu -> y. Exported without fusefuzz's node records, as another
// tool would write it (with them, the import re-fuses Gelu); ForeignExport then makes the Erf a
// Softsign, an op outside the vocabulary (Erf joined it in issue 41).
Graph GeluModel() {
  return ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 3, 6, 6]}],
    "nodes": [
      {"name": "c1", "op": "Conv", "inputs": ["x"], "outputs": ["a"], "attrs": {"pads": [1, 1, 1, 1]},
       "params": {"W": {"shape": [4, 3, 3, 3], "data": )" +
                    Data(108, 0.37) + R"(}}},
      {"name": "g", "op": "Gelu", "inputs": ["a"], "outputs": ["b"]},
      {"name": "c2", "op": "Conv", "inputs": ["b"], "outputs": ["c"],
       "params": {"W": {"shape": [4, 4, 1, 1], "data": )" +
                    Data(16, 0.29) + R"(}}},
      {"name": "bn", "op": "BatchNorm", "inputs": ["c"], "outputs": ["d"],
       "params": {"scale": {"shape": [4], "data": [1.5, 0.5, 2, 1]},
                  "bias": {"shape": [4], "data": [0.1, -0.2, 0.3, 0]},
                  "mean": {"shape": [4], "data": [0.2, 0, -0.1, 0.05]},
                  "var": {"shape": [4], "data": [1, 2, 0.5, 1.5]}}},
      {"name": "r", "op": "Relu", "inputs": ["d"], "outputs": ["y"]}],
    "outputs": ["y"]})");
}

std::string ForeignExport(const Graph& g) {
  OnnxExportOptions opts;
  opts.record_nodes = false;
  onnx::ModelProto m;
  if (!m.ParseFromString(ExportOnnx(g, opts).bytes)) throw std::runtime_error("export unreadable");
  for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
    if (n.op_type() != "Erf") continue;
    n.set_op_type("Softsign");  // x / (1 + |x|): same shape, not in fusefuzz's vocabulary
    n.set_name("g/softsign");
  }
  return m.SerializeAsString();
}

TEST(ImportCut, KeepsTheLargestPartAndNamesTheCut) {
  const std::string bytes = ForeignExport(GeluModel());
  CutImport r = ImportOnnxCut(bytes, "m.onnx");
  // Only Softsign is cut: the Gelu decomposition's last Mul reads the conv output again, so the
  // rest is one connected part.
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_EQ(r.dropped[0],
            "node 'g/softsign' (op type Softsign): not in fusefuzz's vocabulary (see "
            "`fusefuzz list ops`)");
  EXPECT_EQ(r.model_nodes, static_cast<int64_t>(r.graph.nodes.size()) + 1);
  ASSERT_EQ(r.graph.inputs.size(), 2u);
  EXPECT_EQ(r.graph.inputs[0].name, "x");
  ASSERT_EQ(r.cut_inputs.size(), 1u);
  EXPECT_EQ(r.graph.inputs[1].name, r.cut_inputs[0]);
  EXPECT_EQ(r.graph.inputs[1].shape, (Shape{1, 4, 6, 6}));  // from ONNX shape inference
  ASSERT_EQ(r.cut_outputs.size(), 1u);                      // the Div that Softsign reads
  EXPECT_EQ(r.graph.outputs.back(), "y");
  EXPECT_EQ(r.model_inputs.size(), 1u);
  // Without --cut the same model is one clear error naming the node.
  try {
    ImportOnnx(bytes, "m.onnx");
    ADD_FAILURE() << "imported a model with Softsign";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "m.onnx: " + r.dropped[0]);
  }
}

TEST(ImportCut, SmallerPartsAreCutOffToo) {
  Graph g = GeluModel();
  g.nodes = {g.nodes[1]};  // Gelu alone: {Div}, Softsign, {Add, Mul, Mul}: two parts
  g.nodes[0].inputs = {"x"};
  g.outputs = {"b"};
  CutImport r = ImportOnnxCut(ForeignExport(g), "m.onnx");
  ASSERT_EQ(r.dropped.size(), 2u);
  EXPECT_EQ(r.dropped[0],
            "node 'g/arg' (op type Div): importable, but not connected to the "
            "largest importable part");
  EXPECT_EQ(r.graph.nodes.size(), 3u);
  EXPECT_EQ(r.graph.outputs, std::vector<std::string>{"b"});
}

TEST(ImportCut, NothingImportableIsAnError) {
  Graph g = GeluModel();
  g.nodes = {g.nodes[4]};
  g.nodes[0].inputs = {"x"};
  g.outputs = {"y"};
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ExportOnnx(g).bytes));
  m.mutable_graph()->mutable_node(0)->set_op_type("LogSoftmax");
  try {
    ImportOnnxCut(m.SerializeAsString(), "m.onnx");
    ADD_FAILURE() << "imported a model of one LogSoftmax";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "m.onnx: no node of the model is in fusefuzz's vocabulary (first: node 'r' (op "
              "type LogSoftmax): not in fusefuzz's vocabulary (see `fusefuzz list ops`))");
  }
}

bool HaveOnnxRuntime() {
  return fs::exists(TargetsDir() + "/onnxruntime/node_modules/onnxruntime-node");
}

TEST(ImportCut, ValuesAtTheCutFromOnnxRuntimeReproduceTheModel) {
  if (!HaveOnnxRuntime()) GTEST_SKIP() << "onnxruntime-node is not installed (ci/setup)";
  const Graph whole = GeluModel();
  const std::string bytes = ForeignExport(whole);
  CutImport r = ImportOnnxCut(bytes, "m.onnx");
  Graph model_inputs;
  model_inputs.inputs = r.model_inputs;
  const TensorMap drawn = InputsFromSeed(model_inputs, 5);
  TensorMap cut = OnnxRuntimeValues(bytes, "m.onnx", r.model_inputs, drawn, {r.graph.inputs[1]});
  TensorMap in = drawn;
  in[r.graph.inputs[1].name] = cut.at(r.graph.inputs[1].name);
  const RefTensor part = RunReference(r.graph, in).at("y");
  // The whole model as ONNX Runtime computes it (fusefuzz has no Softsign to compute it with).
  const Tensor full =
      OnnxRuntimeValues(bytes, "m.onnx", r.model_inputs, drawn, {ValueInfo{"y", Shape{1, 4, 6, 6}}})
          .at("y");
  ASSERT_EQ(part.value.size(), full.data.size());
  double worst = 0;
  for (size_t i = 0; i < part.value.size(); ++i) {
    // Both float32 runs of ONNX Runtime against our fp64 part: a few float ulps of the magnitude.
    worst = std::max(worst, std::abs(part.value[i] - full.data[i]) / (1 + part.mag[i]));
  }
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(worst, 0);  // it really came from float32, not from our reference
}

TEST(ImportCut, CommandLineWritesThePartAndItsInputsAndCheckRunsThem) {
  if (!HaveOnnxRuntime()) GTEST_SKIP() << "onnxruntime-node is not installed (ci/setup)";
  fs::path dir = TempDir("import-cut");
  WriteFileAtomic((dir / "m.onnx").string(), ForeignExport(GeluModel()));
  const std::string m = (dir / "m.onnx").string(), g = (dir / "g.json").string(),
                    t = (dir / "t.json").string();
  testing::CmdResult no_cut = Fusefuzz("import " + m + " -o " + g);
  EXPECT_EQ(no_cut.status, 2) << no_cut.out;
  EXPECT_NE(no_cut.out.find("node 'g/softsign' (op type Softsign)"), std::string::npos)
      << no_cut.out;
  testing::CmdResult cut = Fusefuzz("import " + m + " -o " + g + " --cut --cut-inputs " + t);
  ASSERT_EQ(cut.status, 0) << cut.out;
  EXPECT_NE(cut.out.find("cut off: node 'g/softsign' (op type Softsign)"), std::string::npos)
      << cut.out;
  testing::CmdResult check = Fusefuzz("check " + g + " --inputs " + t);
  EXPECT_EQ(check.status, 0) << check.out;
  EXPECT_NE(check.out.find("check: PASS"), std::string::npos) << check.out;
  // --cut-inputs without --cut is a usage error.
  EXPECT_EQ(Fusefuzz("import " + m + " -o " + g + " --cut-inputs " + t).status, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
