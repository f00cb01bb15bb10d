// ONNX import: export -> import keeps the meaning of every seed it can import (same reference
// outputs) and is a fixpoint (export(import(export(g))) == export(g) byte for byte for seeds
// without decompositions); auto_pad becomes pads; unknown ops and bad bytes are clear errors.
#include "onnx/import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "generators/generator.h"
#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SeedFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds")) {
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Import, SeedsKeepTheirMeaning) {
  int imported = 0;
  for (const std::string& path : SeedFiles()) {
    Graph g = ReadGraphFile(path);
    std::string bytes = ExportOnnx(g).bytes;
    Graph back;
    try {
      back = ImportOnnx(bytes, path);
    } catch (const InputError& e) {
      // The erf GELU (Erf) decomposes into an op outside the vocabulary; GroupNorm's
      // decomposition reshapes to rank 3 for an InstanceNormalization, which needs rank 4.
      const std::string what = e.what();
      EXPECT_TRUE(what.find("not in fusefuzz's vocabulary") != std::string::npos ||
                  what.find("(InstanceNorm): input 0: expected rank 4") != std::string::npos)
          << what;
      continue;
    }
    ++imported;
    TensorMap in = InputsFromSeed(g, 3);
    RefTensorMap a = RunReference(g, in), b = RunReference(back, in);
    for (const auto& [name, t] : a) {
      ASSERT_TRUE(b.count(name)) << path << " " << name;
      // Float attributes are float32 in JSON and ONNX alike: the same reference, bit for bit.
      EXPECT_TRUE(ToFloatTensor(t).BitwiseEquals(ToFloatTensor(b.at(name)))) << path << " " << name;
    }
    // Nothing was decomposed (Relu6 aside): the ONNX bytes are a fixpoint.
    bool decomposed = false;
    for (const Node& n : g.nodes) {
      decomposed |=
          n.op == Op::FusedConv || n.op == Op::GroupNorm || n.op == Op::Silu || n.op == Op::Gelu;
    }
    if (!decomposed) {
      EXPECT_EQ(ExportOnnx(back).bytes, bytes) << path;
    }
  }
  EXPECT_GE(imported, 10);
}

TEST(Import, FloatAttributesNotExactInFloat32RoundTheSameWay) {
  // 1e-5, 0.01, 0.1, 0.3, 0.7 are not float32 values: JSON reading and ONNX export both round
  // them to the nearest float32, so export -> import gives the same JSON and the same reference.
  Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}],
    "nodes": [
      {"name": "bn", "op": "BatchNorm", "inputs": ["x"], "outputs": ["b"],
       "attrs": {"epsilon": 1e-5},
       "params": {"scale": {"shape": [2], "data": [1, 2]}, "bias": {"shape": [2], "data": [0, 1]},
                  "mean": {"shape": [2], "data": [0.5, -1]}, "var": {"shape": [2], "data": [0.1, 3]}}},
      {"name": "l", "op": "LeakyRelu", "inputs": ["b"], "outputs": ["l"], "attrs": {"alpha": 0.01}},
      {"name": "e", "op": "Elu", "inputs": ["l"], "outputs": ["e"], "attrs": {"alpha": 0.7}},
      {"name": "h", "op": "HardSigmoid", "inputs": ["e"], "outputs": ["h"],
       "attrs": {"alpha": 0.3, "beta": 0.1}},
      {"name": "c", "op": "Clip", "inputs": ["h"], "outputs": ["y"],
       "attrs": {"min": 0.1, "max": 0.7}}],
    "outputs": ["y"]})");
  EXPECT_EQ(AttrFloat(g.nodes[1], "alpha"), static_cast<double>(0.01f));
  Graph back = ImportOnnx(ExportOnnx(g).bytes, "m.onnx");
  // The import leaves out attributes that hold their default (epsilon 1e-5, alpha 0.01), as the
  // generator does: the same graph without them.
  Graph implicit = g;
  implicit.nodes[0].attrs.erase("epsilon");
  implicit.nodes[1].attrs.erase("alpha");
  EXPECT_EQ(WriteGraph(back), WriteGraph(implicit));
  EXPECT_EQ(ExportOnnx(implicit).bytes, ExportOnnx(g).bytes);
  TensorMap in = InputsFromSeed(g, 7);
  EXPECT_TRUE(ToFloatTensor(RunReference(g, in).at("y"))
                  .BitwiseEquals(ToFloatTensor(RunReference(back, in).at("y"))));
}

TEST(Import, UnknownOpNamesNodeAndOpType) {
  // Gelu (erf form) exports an Erf node.
  Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 2, 2]}],
    "nodes": [{"name": "g", "op": "Gelu", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  EXPECT_EQ(ErrorOf([&] { ImportOnnx(ExportOnnx(g).bytes, "m.onnx"); }),
            "m.onnx: node 'g/erf' (op type Erf): not in fusefuzz's vocabulary (see `fusefuzz "
            "list ops`)");
}

// A hand-built model: x[1,1,5,5] -> Conv 3x3 stride 2 auto_pad SAME_UPPER (W from a Constant
// node) -> y.
std::string AutoPadModel(const std::string& auto_pad) {
  auto value_info = [](onnx::ValueInfoProto* vi, const std::string& name,
                       std::vector<int64_t> dims) {
    vi->set_name(name);
    onnx::TypeProto::Tensor* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::NodeProto* constant = graph->add_node();
  constant->add_output("W");
  constant->set_op_type("Constant");
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* w = value->mutable_t();  // W: 9 floats 1.0 as float_data
  for (int64_t d : {1, 1, 3, 3}) w->add_dims(d);
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 9; ++i) w->add_float_data(1.0f);
  onnx::NodeProto* conv = graph->add_node();
  conv->add_input("x");
  conv->add_input("W");
  conv->add_output("y");
  conv->set_name("c");
  conv->set_op_type("Conv");
  onnx::AttributeProto* ap = conv->add_attribute();
  ap->set_name("auto_pad");
  ap->set_s(auto_pad);
  onnx::AttributeProto* strides = conv->add_attribute();
  strides->set_name("strides");
  strides->add_ints(2);
  strides->add_ints(2);
  value_info(graph->add_input(), "x", {1, 1, 6, 6});
  value_info(graph->add_output(), "y", {1, 1, 3, 3});
  return model.SerializeAsString();
}

TEST(Import, AutoPadBecomesExplicitPadsAndConstantsBecomeParams) {
  // in 6, stride 2 -> out 3; total pad (3-1)*2 + 3 - 6 = 1: SAME_UPPER puts it at the end.
  Graph g = ImportOnnx(AutoPadModel("SAME_UPPER"), "m.onnx");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(AttrInts(g.nodes[0], "pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(g.nodes[0].params.at("W").shape, (Shape{1, 1, 3, 3}));
  g = ImportOnnx(AutoPadModel("SAME_LOWER"), "m.onnx");
  EXPECT_EQ(AttrInts(g.nodes[0], "pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  g = ImportOnnx(AutoPadModel("VALID"), "m.onnx");
  EXPECT_EQ(AttrInts(g.nodes[0], "pads"), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(Import, BadBytesAreClearErrors) {
  EXPECT_EQ(ErrorOf([] { ImportOnnx("", "m.onnx"); }),
            "m.onnx: no graph in the model (not an ONNX ModelProto?)");
  EXPECT_EQ(ErrorOf([] { ImportOnnx("\x3a\xff\xff", "m.onnx"); }),
            "m.onnx: malformed ONNX ModelProto (libprotobuf cannot parse it)");
  EXPECT_EQ(ErrorOf([] { ImportOnnxFile("/nonexistent.onnx"); }),
            "/nonexistent.onnx: cannot open file: No such file or directory");
}

}  // namespace
}  // namespace fusefuzz

namespace fusefuzz {
namespace {

// export -> import gives back the very JSON of a generated graph, unless the graph has an op
// that ONNX opset 17 lacks (exported as its decomposition, which imports as the decomposition's
// ops). FUSEFUZZ_ROUNDTRIP_GRAPHS=10000 runs the measurement of docs/onnx.md.
TEST(Import, GeneratedGraphsComeBackAsTheSameJson) {
  int64_t n = 300;
  if (const char* env = std::getenv("FUSEFUZZ_ROUNDTRIP_GRAPHS")) n = std::atoll(env);
  int64_t identical = 0, decomposed = 0;
  std::map<std::string, int64_t> by_op;
  const GenConfig cfg;
  for (int64_t i = 0; i < n; ++i) {
    const Graph g = GenerateFromSeed(static_cast<uint64_t>(1000003 * (i + 1)), cfg).graph;
    std::string why;
    for (const Node& node : g.nodes) {
      if (node.op == Op::FusedConv || node.op == Op::Silu || node.op == Op::Gelu ||
          node.op == Op::GroupNorm) {
        why = std::string(OpName(node.op));
      }
    }
    if (!why.empty()) {
      ++decomposed;
      ++by_op[why];
      continue;
    }
    // The generator sometimes writes a default explicitly (it draws epsilon 1e-5 among others);
    // the import leaves defaults out.
    Graph canonical = g;
    for (Node& node : canonical.nodes) DropDefaultAttrs(node.op, node.attrs);
    const Graph back = ImportOnnx(ExportOnnx(g).bytes, "case " + std::to_string(i));
    const bool same = WriteGraph(back) == WriteGraph(canonical);
    EXPECT_TRUE(same) << "case " << i << ":\n" << WriteGraph(back);
    identical += same;
  }
  std::string ops;
  for (const auto& [op, count] : by_op) ops += " " + op + ":" + std::to_string(count);
  std::printf(
      "%lld graphs: %lld identical JSON after export -> import, %lld with a "
      "decomposition (by op:%s)\n",
      static_cast<long long>(n), static_cast<long long>(identical),
      static_cast<long long>(decomposed), ops.c_str());
  EXPECT_EQ(identical + decomposed, n);
}

}  // namespace
}  // namespace fusefuzz
