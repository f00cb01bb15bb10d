// ONNX export spellings (issue 51): each writes its node list, passes libonnx's checker and
// strict shape inference, and imports back as the very graph, spelling included.
#include "onnx/export_spellings.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/validate.h"

namespace fusefuzz {
namespace {

std::string Filled(const std::string& shape, int n) {
  std::string data;
  for (int i = 0; i < n; ++i) data += (i ? "," : "") + std::to_string(0.25 * (i % 7 - 3));
  return R"({"shape":)" + shape + R"(,"data":[)" + data + "]}";
}

std::string GraphText(const std::string& input_shape, const std::string& node,
                      const std::string& spelling) {
  std::string n = node;
  n.insert(n.size() - 1, R"(,"spelling":")" + spelling + "\"");
  return R"({"format":"fusefuzz-graph","version":2,"inputs":[{"name":"x","shape":)" + input_shape +
         R"(}],"nodes":[)" + n + R"(],"outputs":["y"]})";
}

const std::string kConv =
    R"({"name":"n","op":"Conv","inputs":["x"],"outputs":["y"],"params":{"W":)" +
    Filled("[3,2,3,3]", 54) + R"(,"B":)" + Filled("[3]", 3) + "}}";
const std::string kReshape =
    R"({"name":"n","op":"Reshape","inputs":["x"],"outputs":["y"],"attrs":{"shape":[1,-1]}})";
const std::string kFlatten = R"({"name":"n","op":"Flatten","inputs":["x"],"outputs":["y"]})";
const std::string kMul = R"({"name":"n","op":"Mul","inputs":["x"],"outputs":["y"],"params":{"B":)" +
                         Filled("[1,1,1,1]", 1) + "}}";
const std::string kGemm =
    R"({"name":"n","op":"Gemm","inputs":["x"],"outputs":["y"],"attrs":{"transB":1},"params":{"B":)" +
    Filled("[3,4]", 12) + R"(,"C":)" + Filled("[3]", 3) + "}}";
const std::string kMatMul =
    R"({"name":"n","op":"MatMul","inputs":["x"],"outputs":["y"],"params":{"B":)" +
    Filled("[4,3]", 12) + "}}";

struct Case {
  std::string spelling, input_shape, node;
  std::vector<std::string> onnx_ops;
};

TEST(OnnxSpellings, EachWritesItsNodesAndImportsBackAsTheNode) {
  const std::vector<Case> cases = {
      {"onnx.identity-after", "[1,2,4,4]", kConv, {"Conv", "Identity"}},
      {"onnx.dropout-after", "[1,2,4,4]", kConv, {"Conv", "Dropout"}},
      {"onnx.cast-same-type", "[1,2,4,4]", kConv, {"Conv", "Cast"}},
      {"onnx.identity-transpose", "[1,2,4,4]", kConv, {"Conv", "Transpose"}},
      {"onnx.unsqueeze-squeeze", "[1,2,4,4]", kConv, {"Conv", "Unsqueeze", "Squeeze"}},
      {"onnx.constant-nodes", "[1,2,4,4]", kConv, {"Constant", "Constant", "Conv"}},
      {"onnx.reshape-chain", "[1,2,4,4]", kReshape, {"Reshape", "Reshape"}},
      {"onnx.reshape-computed-shape",
       "[1,2,4,4]",
       kReshape,
       {"Shape", "Gather", "Concat", "Reshape"}},
      {"onnx.flatten-as-reshape", "[2,2,4,4]", kFlatten, {"Reshape"}},
      {"onnx.scalar-shape-0", "[1,2,4,4]", kMul, {"Mul"}},
      {"onnx.scalar-shape-1", "[1,2,4,4]", kMul, {"Mul"}},
      {"onnx.scalar-shape-1x1x1", "[1,2,4,4]", kMul, {"Mul"}},
      {"onnx.gemm-as-matmul-add", "[2,4]", kGemm, {"MatMul", "Add"}},
      {"onnx.gemm-flip-transB", "[2,4]", kGemm, {"Gemm"}},
      {"onnx.matmul-as-gemm", "[2,4]", kMatMul, {"Gemm"}},
  };
  std::set<std::string> tested;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spelling);
    tested.insert(c.spelling);
    const Graph g = ParseGraph(GraphText(c.input_shape, c.node, c.spelling));
    ASSERT_EQ(g.nodes.at(0).spelling, c.spelling);
    const std::string bytes = ExportOnnx(g).bytes;
    EXPECT_EQ(CheckOnnxModel(bytes), "");
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(bytes));
    std::vector<std::string> ops;
    for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
    EXPECT_EQ(ops, c.onnx_ops);
    OnnxImportInfo info;
    const Graph back = ImportOnnx(bytes, "m.onnx", {}, &info);
    // The import drops float-to-float Casts before it reads the records (docs/onnx.md): that
    // spelling comes back as the plain node, its documented equivalent.
    Graph want = g;
    if (c.spelling == "onnx.cast-same-type") want.nodes[0].spelling.clear();
    EXPECT_EQ(WriteGraph(back), WriteGraph(want));
  }
  for (const SpellingInfo& i : AllSpellings()) {
    if (i.family == SpellingFamily::kOnnx) {
      EXPECT_TRUE(tested.count(std::string(i.name))) << i.name;
    }
  }
}

// A spelling on an op that passes integers (a Pad between a QuantizeLinear and a
// DequantizeLinear) whose input is an integer graph output: the export renames that input
// (onnx/export_quant.h), and the spelling's shapes are still found under the graph's names (a
// --quant campaign on onnxruntime:all ended in std::out_of_range here).
TEST(OnnxSpellings, OnAnIntegerPassThroughReadingAnIntegerGraphOutput) {
  for (const char* spelling :
       {"onnx.identity-after", "onnx.unsqueeze-squeeze", "onnx.identity-transpose"}) {
    SCOPED_TRACE(spelling);
    const Graph g = ParseGraph(std::string(R"({"format":"fusefuzz-graph","version":2,
      "inputs":[{"name":"x","shape":[1,2,4,4]}],
      "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["a"],
        "quant":{"y":{"type":"uint8","scale":[0.5],"zero_point":[10]}}},
       {"name":"p","op":"Pad","inputs":["a"],"outputs":["b"],"attrs":{"pads":[0,1,1,2],
        "value":128},"spelling":")") +
                               spelling + R"("},
       {"name":"d","op":"DequantizeLinear","inputs":["b"],"outputs":["z"],
        "quant":{"x":{"type":"uint8","scale":[0.5],"zero_point":[10]}}}],
      "outputs":["z","a"]})");
    const std::string bytes = ExportOnnx(g).bytes;
    EXPECT_EQ(CheckOnnxModel(bytes), "");
  }
}

TEST(OnnxSpellings, ScalarShapesAreWrittenAsTheySay) {
  auto dims = [](const std::string& spelling) {
    onnx::ModelProto m;
    EXPECT_TRUE(
        m.ParseFromString(ExportOnnx(ParseGraph(GraphText("[1,2,4,4]", kMul, spelling))).bytes));
    std::vector<int64_t> d(m.graph().initializer(0).dims().begin(),
                           m.graph().initializer(0).dims().end());
    return d;
  };
  EXPECT_EQ(dims("onnx.scalar-shape-0"), (std::vector<int64_t>{}));
  EXPECT_EQ(dims("onnx.scalar-shape-1"), (std::vector<int64_t>{1}));
  EXPECT_EQ(dims("onnx.scalar-shape-1x1x1"), (std::vector<int64_t>{1, 1, 1}));
}

TEST(OnnxSpellings, ATorchSpellingExportsPlainAndComesBack) {
  const Graph g = ParseGraph(GraphText("[1,2,4,4]", kConv, "torch.F.conv2d"));
  const std::string bytes = ExportOnnx(g).bytes;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Conv");
  EXPECT_EQ(WriteGraph(ImportOnnx(bytes, "m.onnx")), WriteGraph(g));
}

}  // namespace
}  // namespace fusefuzz
