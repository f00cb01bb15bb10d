// ONNX import: export -> import keeps the meaning of every seed it can import (same reference
// outputs) and is a fixpoint (export(import(export(g))) == export(g) byte for byte for seeds
// without decompositions); auto_pad becomes pads; unknown ops and bad bytes are clear errors.
#include "onnx/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "onnx/onnx_fields.h"
#include "onnx/proto_writer.h"

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
      // GroupNorm (Reshape) and the erf GELU (Erf) decompose into ops outside the vocabulary.
      EXPECT_NE(std::string(e.what()).find("not in fusefuzz's vocabulary"), std::string::npos)
          << e.what();
      continue;
    }
    ++imported;
    TensorMap in = InputsFromSeed(g, 3);
    RefTensorMap a = RunReference(g, in), b = RunReference(back, in);
    for (const auto& [name, t] : a) {
      ASSERT_TRUE(b.count(name)) << path << " " << name;
      for (size_t i = 0; i < t.value.size(); ++i) {
        // Float attributes were rounded to float32 by the export: tiny differences only.
        EXPECT_NEAR(t.value[i], b.at(name).value[i], 1e-5 * (1 + t.mag[i])) << path << " " << name;
      }
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
  auto value_info = [](const std::string& name, std::vector<int64_t> dims) {
    pb::Writer shape;
    for (int64_t d : dims) {
      pb::Writer dim;
      dim.Int64(onnxf::kDimValue, d);
      shape.Message(onnxf::kShapeDim, dim);
    }
    pb::Writer tensor;
    tensor.Varint(onnxf::kTypeTensorElemType, onnxf::kFloat);
    tensor.Message(onnxf::kTypeTensorShape, shape);
    pb::Writer type;
    type.Message(onnxf::kTypeTensorType, tensor);
    pb::Writer vi;
    vi.Bytes(onnxf::kValueInfoName, name);
    vi.Message(onnxf::kValueInfoType, type);
    return vi;
  };
  pb::Writer w;  // TensorProto of W: 9 floats 1.0 as float_data
  for (int64_t d : {1, 1, 3, 3}) w.Int64(onnxf::kTensorDims, d);
  w.Int64(onnxf::kTensorDataType, onnxf::kFloat);
  for (int i = 0; i < 9; ++i) w.Float(onnxf::kTensorFloatData, 1.0f);
  pb::Writer value;
  value.Bytes(onnxf::kAttrName, "value");
  value.Message(onnxf::kAttrT, w);
  value.Varint(onnxf::kAttrType, onnxf::kAttrTypeTensor);
  pb::Writer constant;
  constant.Bytes(onnxf::kNodeOutput, "W");
  constant.Bytes(onnxf::kNodeOpType, "Constant");
  constant.Message(onnxf::kNodeAttribute, value);
  pb::Writer ap;
  ap.Bytes(onnxf::kAttrName, "auto_pad");
  ap.Bytes(onnxf::kAttrS, auto_pad);
  pb::Writer strides;
  strides.Bytes(onnxf::kAttrName, "strides");
  strides.Int64(onnxf::kAttrInts, 2);
  strides.Int64(onnxf::kAttrInts, 2);
  pb::Writer conv;
  conv.Bytes(onnxf::kNodeInput, "x");
  conv.Bytes(onnxf::kNodeInput, "W");
  conv.Bytes(onnxf::kNodeOutput, "y");
  conv.Bytes(onnxf::kNodeName, "c");
  conv.Bytes(onnxf::kNodeOpType, "Conv");
  conv.Message(onnxf::kNodeAttribute, ap);
  conv.Message(onnxf::kNodeAttribute, strides);
  pb::Writer graph;
  graph.Message(onnxf::kGraphNode, constant);
  graph.Message(onnxf::kGraphNode, conv);
  graph.Message(onnxf::kGraphInput, value_info("x", {1, 1, 6, 6}));
  graph.Message(onnxf::kGraphOutput, value_info("y", {1, 1, 3, 3}));
  pb::Writer model;
  model.Int64(onnxf::kModelIrVersion, 8);
  model.Message(onnxf::kModelGraph, graph);
  return model.data();
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
            "m.onnx: malformed model (not an ONNX ModelProto?): truncated varint at byte 3");
  EXPECT_EQ(ErrorOf([] { ImportOnnxFile("/nonexistent.onnx"); }),
            "/nonexistent.onnx: cannot open file: No such file or directory");
}

}  // namespace
}  // namespace fusefuzz
