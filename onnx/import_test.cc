// ONNX import: export -> import keeps the meaning of every seed it can import (same reference
// outputs) and is a fixpoint (export(import(export(g))) == export(g) byte for byte); fusefuzz's
// decompositions come back as their node only when the records hold; auto_pad becomes pads;
// unknown ops and bad bytes are clear errors.
#include "onnx/import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

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
  for (const std::string& path : SeedFiles()) {
    Graph g = ReadGraphFile(path);
    std::string bytes = ExportOnnx(g).bytes;
    OnnxImportInfo info;
    Graph back = ImportOnnx(bytes, path, {}, &info);
    EXPECT_EQ(info.not_refused, "") << path;
    TensorMap in = InputsFromSeed(g, 3);
    RefTensorMap a = RunReference(g, in), b = RunReference(back, in);
    for (const auto& [name, t] : a) {
      ASSERT_TRUE(b.count(name)) << path << " " << name;
      // Float attributes are float32 in JSON and ONNX alike: the same reference, bit for bit.
      EXPECT_TRUE(ToFloatTensor(t).BitwiseEquals(ToFloatTensor(b.at(name)))) << path << " " << name;
    }
    // Decomposed nodes included, the ONNX bytes are a fixpoint.
    EXPECT_EQ(ExportOnnx(back).bytes, bytes) << path;
  }
}

// The model's bytes with its metadata_props changed by `edit`.
std::string EditMetadata(const std::string& bytes,
                         const std::function<void(std::map<std::string, std::string>*)>& edit) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  std::map<std::string, std::string> meta;
  for (const auto& e : m.metadata_props()) meta[e.key()] = e.value();
  edit(&meta);
  m.clear_metadata_props();
  for (const auto& [k, v] : meta) {
    auto* e = m.add_metadata_props();
    e->set_key(k);
    e->set_value(v);
  }
  return m.SerializeAsString();
}

Graph ParseTestGraph(const char* nodes) {
  return ParseGraph(std::string(R"({"format": "fusefuzz-graph", "version": 2,
    "inputs": [{"name": "x", "shape": [1, 2, 3, 3]}], "nodes": [)") +
                    nodes + R"(], "outputs": ["y"]})");
}

TEST(Import, DecomposedNodesComeBackAsTheNode) {
  Graph g = ParseTestGraph(R"(
    {"name": "c", "op": "FusedConv", "inputs": ["x", "x"], "outputs": ["f"],
     "attrs": {"pads": [1, 1, 1, 1]},
     "params": {"W": {"shape": [2, 2, 3, 3], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5,
                     6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9]}},
     "epilogue": [{"kind": "scale_shift", "params": {"scale": {"shape": [2], "data": [2, 3]},
                                                     "shift": {"shape": [2], "data": [0, 1]}}},
                  {"kind": "add", "input": 1},
                  {"kind": "activation", "op": "PRelu",
                   "params": {"slope": {"shape": [2, 1, 1], "data": [0.1, 0.2]}}}]},
    {"name": "g", "op": "Gelu", "inputs": ["f"], "outputs": ["y"]})");
  const std::string bytes = ExportOnnx(g).bytes;
  OnnxImportInfo info;
  Graph back = ImportOnnx(bytes, "m.onnx", {}, &info);
  EXPECT_EQ(info.refused, 2);
  EXPECT_EQ(info.not_refused, "");
  EXPECT_EQ(WriteGraph(back), WriteGraph(g));

  Graph gemm = ParseTestGraph(R"(
    {"name": "f", "op": "Flatten", "inputs": ["x"], "outputs": ["f"]},
    {"name": "m", "op": "Gemm", "inputs": ["f"], "outputs": ["y"], "attrs": {"transB": 1},
     "params": {"B": {"shape": [1, 18], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7,
                                                  8, 9]}},
     "epilogue": [{"kind": "activation", "op": "LeakyRelu", "attrs": {"alpha": 0.2}},
                  {"kind": "clamp", "attrs": {"min": -1, "max": 6}}]})");
  info = {};
  back = ImportOnnx(ExportOnnx(gemm).bytes, "m.onnx", {}, &info);
  EXPECT_EQ(info.refused, 1);
  EXPECT_EQ(WriteGraph(back), WriteGraph(gemm));
}

TEST(Import, RecordsThatDoNotHoldAreNotUsed) {
  Graph g = ParseTestGraph(R"({"name": "s", "op": "Silu", "inputs": ["x"], "outputs": ["y"]})");
  const std::string bytes = ExportOnnx(g).bytes;
  const std::string key = std::string(kOnnxNodeRecordPrefix) + "s";
  auto import_with = [&](const std::function<void(std::string*)>& edit, OnnxImportInfo* info) {
    return ImportOnnx(EditMetadata(bytes, [&](auto* meta) { edit(&(*meta)[key]); }), "m.onnx", {},
                      info);
  };
  struct Case {
    const char* what;
    std::function<void(std::string*)> edit;
    const char* why;  // part of OnnxImportInfo::not_refused
  };
  const std::vector<Case> cases = {
      // A record that lies about the op: re-exporting it does not give the model back.
      {"lying op", [](std::string* v) { v->replace(v->find("\"Silu\""), 6, "\"Tanh\""); },
       "does not give the model back (first difference: node"},
      {"not JSON", [](std::string* v) { *v = "{\"node\": "; },
       "m.onnx: metadata 'fusefuzz:node:s'"},
      {"no such ONNX node", [](std::string* v) { v->replace(v->find("s/mul"), 5, "s/mux"); },
       "ONNX node 's/mux' is missing or claimed twice"},
      {"unknown key", [](std::string* v) { v->replace(v->find("\"inputs\""), 8, "\"inputz\""); },
       "the node needs inputs and outputs"},
  };
  for (const Case& c : cases) {
    OnnxImportInfo info;
    Graph back = import_with(c.edit, &info);
    EXPECT_EQ(info.refused, 0) << c.what;
    EXPECT_NE(info.not_refused.find(c.why), std::string::npos)
        << c.what << ": " << info.not_refused;
    // The decomposition itself: Sigmoid, then Mul.
    ASSERT_EQ(back.nodes.size(), 2u) << c.what;
    EXPECT_EQ(back.nodes[0].op, Op::Sigmoid);
    EXPECT_EQ(back.nodes[1].op, Op::Mul);
  }
  // A record pointing at an initializer that holds something else.
  Graph conv = ParseTestGraph(R"(
    {"name": "c", "op": "FusedConv", "inputs": ["x"], "outputs": ["y"],
     "params": {"W": {"shape": [2, 2, 1, 1], "data": [1, 2, 3, 4]},
                "B": {"shape": [2], "data": [5, 6]}}})");
  OnnxImportInfo info;
  Graph back = ImportOnnx(EditMetadata(ExportOnnx(conv).bytes,
                                       [](auto* meta) {
                                         std::string& v = (*meta)["fusefuzz:node:c"];
                                         v.replace(v.find("\"c.B\""), 5, "\"c.W\"");
                                       }),
                          "m.onnx", {}, &info);
  EXPECT_NE(info.not_refused.find("does not hold the 4 values"), std::string::npos)
      << info.not_refused;
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].op, Op::Conv);
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

TEST(Import, UnrecordedGeluComesBackAsItsDecomposition) {
  // Gelu (erf form) exports Div, Erf, Add, Mul, Mul; without fusefuzz's record the import keeps
  // them, now that Erf is in the vocabulary, and computes the same function.
  Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 2, 2]}],
    "nodes": [{"name": "g", "op": "Gelu", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const std::string bytes =
      EditMetadata(ExportOnnx(g).bytes, [](auto* meta) { meta->erase("fusefuzz:node:g"); });
  Graph back = ImportOnnx(bytes, "m.onnx");
  std::set<Op> ops;
  for (const Node& n : back.nodes) ops.insert(n.op);
  EXPECT_EQ(ops, (std::set<Op>{Op::Div, Op::Erf, Op::Add, Op::Mul}));
  TensorMap in = InputsFromSeed(g, 7);
  const Tensor want = ToFloatTensor(RunReference(g, in).at("y"));
  const Tensor got = ToFloatTensor(RunReference(back, in).at("y"));
  ASSERT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < want.data.size(); ++i) {
    EXPECT_NEAR(got.data[i], want.data[i], 1e-6 * (1 + std::fabs(want.data[i])));
  }
}

TEST(Import, UnknownOpNamesNodeAndOpType) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::NodeProto* node = graph->add_node();
  node->add_input("x");
  node->add_output("y");
  node->set_name("s");
  node->set_op_type("Hardmax");
  for (const char* name : {"x", "y"}) {
    onnx::ValueInfoProto* vi = name[0] == 'x' ? graph->add_input() : graph->add_output();
    vi->set_name(name);
    onnx::TypeProto::Tensor* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 2, 2, 2}) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  EXPECT_EQ(ErrorOf([&] { ImportOnnx(model.SerializeAsString(), "m.onnx"); }),
            "m.onnx: node 's' (op type Hardmax): not in fusefuzz's vocabulary (see `fusefuzz "
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

TEST(Import, HostileAttributesAndSizesAreClearErrors) {
  // Each edit of the auto_pad model must be an InputError naming the node, never a division by
  // zero, an out-of-bounds read or an int64 overflow (found by reading the importer after the
  // ONNX import fuzzer's first bug).
  auto edited = [](const std::function<void(onnx::ModelProto*)>& edit) {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(AutoPadModel("SAME_UPPER")));
    edit(&m);
    return m.SerializeAsString();
  };
  auto strides = [](onnx::ModelProto* m) {
    return m->mutable_graph()->mutable_node(1)->mutable_attribute(1);
  };
  const std::string stride_error =
      "m.onnx: node 'c' (op type Conv): strides must be 2 numbers in [1, 16777216] (2-D only)";
  EXPECT_EQ(
      ErrorOf([&] { ImportOnnx(edited([&](auto* m) { strides(m)->set_ints(0, 0); }), "m.onnx"); }),
      stride_error);
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(edited([&](auto* m) { strides(m)->mutable_ints()->RemoveLast(); }),
                         "m.onnx");
            }),
            stride_error);
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(edited([&](auto* m) {
                           m->mutable_graph()
                               ->mutable_input(0)
                               ->mutable_type()
                               ->mutable_tensor_type()
                               ->mutable_shape()
                               ->mutable_dim()
                               ->RemoveLast();
                         }),
                         "m.onnx");
            }),
            "m.onnx: node 'c' (op type Conv): input must have rank 4 (2-D only) and dims in [1, "
            "16777216], got [1,1,6]");
  // Four dims of 2^24 multiply past int64: refused before multiplying.
  EXPECT_EQ(ErrorOf([&] {
              ImportOnnx(
                  edited([&](auto* m) {
                    onnx::TensorProto* w =
                        m->mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
                    for (int i = 0; i < 4; ++i) w->set_dims(i, int64_t{1} << 24);
                  }),
                  "m.onnx");
            }),
            "m.onnx: node '' (op type Constant) value: more elements than the limit");
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
    std::set<std::string> ops;
    for (const Node& node : g.nodes) {
      if (node.op == Op::FusedConv || node.op == Op::Silu || node.op == Op::Gelu ||
          node.op == Op::GroupNorm || (node.op == Op::Gemm && !node.epilogue.empty())) {
        ops.insert(std::string(OpName(node.op)));
      }
    }
    decomposed += !ops.empty();
    for (const std::string& op : ops) ++by_op[op];
    // The generator sometimes writes a default explicitly (it draws epsilon 1e-5 among others);
    // the import leaves defaults out.
    Graph canonical = g;
    for (Node& node : canonical.nodes) DropDefaultAttrs(node.op, node.attrs);
    OnnxImportInfo info;
    const Graph back = ImportOnnx(ExportOnnx(g).bytes, "case " + std::to_string(i), {}, &info);
    EXPECT_EQ(info.not_refused, "") << "case " << i;
    const bool same = WriteGraph(back) == WriteGraph(canonical);
    EXPECT_TRUE(same) << "case " << i << ":\n" << WriteGraph(back);
    identical += same;
  }
  std::string ops;
  for (const auto& [op, count] : by_op) ops += " " + op + ":" + std::to_string(count);
  std::printf(
      "%lld graphs: %lld identical JSON after export -> import, of which %lld hold a "
      "decomposed op (graphs by op:%s)\n",
      static_cast<long long>(n), static_cast<long long>(identical),
      static_cast<long long>(decomposed), ops.c_str());
  EXPECT_EQ(identical, n);
}

}  // namespace
}  // namespace fusefuzz
