// ONNX export: every seed and 300 generated graphs pass libonnx's checker and strict shape
// inference; bytes are deterministic; PRelu and per-channel constants get [C,1,1]; fresh names
// never collide; TensorProto files round-trip bit for bit and malformed ones are clear errors.
#include "onnx/export.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "generators/generator.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
#include "onnx/validate.h"

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

onnx::ModelProto Parse(const std::string& model) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(model));
  return m;
}

// The initializers of a serialized model, decoded (float ones only).
std::map<std::string, Tensor> FloatInitializers(const std::string& model) {
  std::map<std::string, Tensor> out;
  onnx::ModelProto m = Parse(model);  // kept alive: the loop walks into it
  for (const onnx::TensorProto& t : m.graph().initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT || t.dims_size() == 0) continue;
    NamedTensor nt = DecodeTensorProto(t.SerializeAsString(), "initializer");
    out[nt.name] = nt.tensor;
  }
  return out;
}

// Op types of the model's nodes, in order.
std::vector<std::string> OpTypes(const std::string& model) {
  std::vector<std::string> out;
  onnx::ModelProto m = Parse(model);
  for (const onnx::NodeProto& n : m.graph().node()) out.push_back(n.op_type());
  return out;
}

TEST(Export, SeedsPassLibonnx) {
  for (const std::string& path : SeedFiles()) {
    Graph g = ReadGraphFile(path);
    OnnxModel m = ExportOnnx(g);
    EXPECT_EQ(CheckOnnxModel(m.bytes, !PoolShapesPredateLibonnx(g)), "") << path;
  }
}

TEST(Export, GeneratedGraphsPassLibonnx) {
  int strict = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Graph g = GenerateFromSeed(seed, {}).graph;
    bool shapes = !PoolShapesPredateLibonnx(g);
    strict += shapes;
    EXPECT_EQ(CheckOnnxModel(ExportOnnx(g).bytes, shapes), "") << "seed " << seed;
  }
  EXPECT_GT(strict, 250);  // the checker-only exception stays an exception
}

TEST(Export, BytesAreDeterministic) {
  Graph g = ReadGraphFile(std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/op-fusedconv.json");
  EXPECT_EQ(ExportOnnx(g).bytes, ExportOnnx(g).bytes);
}

const char* kPreluGraph = R"({"format": "fusefuzz-graph", "version": 1,
  "inputs": [{"name": "x", "shape": [1, 3, 2, 2]}],
  "nodes": [{"name": "p", "op": "PRelu", "inputs": ["x"], "outputs": ["y"],
             "params": {"slope": {"shape": [3], "data": [0.5, 0.25, 2]}}}],
  "outputs": ["y"]})";

// Graph format 1 read a [C] slope per channel: the reader migrates it to [C, 1, 1], which both
// formats broadcast along dim 1.
TEST(Export, VersionOnePreluSlopeStaysPerChannel) {
  OnnxModel m = ExportOnnx(ParseGraph(kPreluGraph));
  auto inits = FloatInitializers(m.bytes);
  ASSERT_EQ(inits.count("p.slope"), 1u);
  EXPECT_EQ(inits["p.slope"].shape, (Shape{3, 1, 1}));
  EXPECT_EQ(inits["p.slope"].data, (std::vector<float>{0.5f, 0.25f, 2.0f}));
  EXPECT_EQ(CheckOnnxModel(m.bytes), "");
}

// Version 2 broadcasts the slope as ONNX does: exported as is, and imported as is.
TEST(Export, PreluSlopeIsExportedAsIs) {
  for (const char* shape : {"[2]", "[2, 2]", "[1]", "[3, 1, 1]", "[3, 2, 2]"}) {
    std::string s = shape;
    Shape want;
    for (char ch : s) {
      if (ch >= '0' && ch <= '9') want.push_back(ch - '0');
    }
    Tensor slope(want, 0.5f);
    Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 2,
      "inputs": [{"name": "x", "shape": [1, 3, 2, 2]}],
      "nodes": [{"name": "p", "op": "PRelu", "inputs": ["x"], "outputs": ["y"],
                 "params": {"slope": )" +
                         TensorToJson(slope).dump() + R"(}}],
      "outputs": ["y"]})");
    OnnxModel m = ExportOnnx(g);
    auto inits = FloatInitializers(m.bytes);
    EXPECT_EQ(inits["p.slope"].shape, want) << s;
    EXPECT_EQ(CheckOnnxModel(m.bytes), "") << s;
    EXPECT_EQ(ImportOnnx(m.bytes, "m.onnx").nodes.at(0).params.at("slope").shape, want) << s;
  }
}

// Pad "wrap" and a dilated AvgPool exist in ONNX from opset 19: only such graphs are exported at
// opset 19 (IR 9); libonnx 1.12 cannot check them (tests/onnx_opset19.sh runs them in ONNX
// Runtime instead). Import reads them back: export(import(export(g))) == export(g).
TEST(Export, OpsetNineteenOnlyWhereNeeded) {
  const std::string dir = std::string(FUSEFUZZ_SOURCE_DIR) + "/tests/data/";
  for (const char* name : {"opset19-pad-wrap.json", "opset19-avgpool-dilated.json"}) {
    Graph g = ReadGraphFile(dir + name);
    EXPECT_EQ(RequiredOnnxOpset(g), 19) << name;
    OnnxModel m = ExportOnnx(g);
    EXPECT_EQ(m.opset, 19) << name;
    onnx::ModelProto p = Parse(m.bytes);
    ASSERT_EQ(p.opset_import_size(), 1);
    EXPECT_EQ(p.opset_import(0).version(), 19) << name;
    EXPECT_EQ(p.ir_version(), 9) << name;
    EXPECT_FALSE(LibonnxKnowsOpset(m.opset));
    EXPECT_EQ(ExportOnnx(ImportOnnx(m.bytes, name)).bytes, m.bytes) << name;
  }
  // A dilated MaxPool is opset 17 (MaxPool-12 has dilations), as is every seed.
  Graph max = ReadGraphFile(dir + "opset19-avgpool-dilated.json");
  for (Node& n : max.nodes) {
    n.op = Op::MaxPool;
    n.attrs.erase("count_include_pad");
  }
  EXPECT_EQ(ExportOnnx(max).opset, 17);
  for (const std::string& path : SeedFiles()) {
    EXPECT_EQ(ExportOnnx(ReadGraphFile(path)).opset, 17) << path;
  }
}

TEST(Export, DecompositionsAreRecordedAndNamesNeverCollide) {
  // Value "s/sigmoid" exists already: the Silu decomposition of node "s" must not reuse it.
  Graph g = ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 2, 2]}],
    "nodes": [{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["s/sigmoid"]},
              {"name": "s", "op": "Silu", "inputs": ["s/sigmoid"], "outputs": ["y"]},
              {"name": "g", "op": "Gelu", "inputs": ["y"], "outputs": ["z"],
               "attrs": {"approximate": "tanh"}},
              {"name": "r", "op": "Relu6", "inputs": ["z"], "outputs": ["w"]}],
    "outputs": ["w"]})");
  OnnxModel m = ExportOnnx(g);
  std::map<std::string, std::string> meta(m.metadata.begin(), m.metadata.end());
  EXPECT_EQ(meta["fusefuzz:decomposition:s"], "Silu = Mul(x, Sigmoid(x))");
  EXPECT_EQ(meta["fusefuzz:decomposition:r"], "Relu6 = Clip(x, 0, 6)");
  EXPECT_NE(meta["fusefuzz:decomposition:g"].find("Tanh"), std::string::npos);
  EXPECT_EQ(m.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(m.output_names, std::vector<std::string>{"w"});
  std::vector<std::string> ops = OpTypes(m.bytes);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Sigmoid"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Tanh"), 1);
  // A duplicate output name would fail the checker's SSA test.
  EXPECT_EQ(CheckOnnxModel(m.bytes), "");
}

TEST(Export, EveryOpHasAnExport) {
  // The seeds together use every op of ir/ops.def; the exporter's switch names every case, so
  // this guards the seeds' coverage rather than the switch.
  std::set<Op> seen;
  for (const std::string& path : SeedFiles()) {
    for (const Node& n : ReadGraphFile(path).nodes) seen.insert(n.op);
  }
  for (Op op : AllOps()) {
    // The seeds are float graphs; the quantized ops' QDQ export is tested on quantized graphs
    // (quant_onnx_test.cc, and ctest onnx/ort-quant on `gen --quant` graphs).
    if (FamilyOf(op) == OpFamily::kQuant || op == Op::QLinearConv) continue;
    EXPECT_TRUE(seen.count(op)) << OpName(op) << " has no seed";
  }
}

TEST(Export, GroupNormUsesOpset17Ops) {
  Graph g = ReadGraphFile(std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/op-norms.json");
  std::vector<std::string> ops = OpTypes(ExportOnnx(g).bytes);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "GroupNormalization"), 0);
}

TEST(Base64, KnownVectors) {
  EXPECT_EQ(Base64Bytes(""), "");
  EXPECT_EQ(Base64Bytes("f"), "Zg==");
  EXPECT_EQ(Base64Bytes("fo"), "Zm8=");
  EXPECT_EQ(Base64Bytes("foo"), "Zm9v");
  EXPECT_EQ(Base64Bytes("foobar"), "Zm9vYmFy");
}

TEST(TensorProto, RoundTripsBitForBit) {
  Tensor t({2, 3},
           {1.5f, -0.0f, std::numeric_limits<float>::infinity(),
            -std::numeric_limits<float>::infinity(), std::bit_cast<float>(0x7fc00123u), 1e-45f});
  NamedTensor back = DecodeTensorProto(EncodeTensorProto("x", t), "t.pb");
  EXPECT_EQ(back.name, "x");
  EXPECT_TRUE(back.tensor.BitwiseEquals(t));
}

TEST(TensorProto, FloatDataAndPackedDimsAreRead) {
  // dims written packed (proto3-style, as some writers do): protobuf accepts both encodings.
  std::string packed_dims = "\x0a\x02\x02\x01";  // field 1, length 2: varints 2, 1
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_float_data(3.0f);
  p.add_float_data(-1.0f);
  NamedTensor t = DecodeTensorProto(packed_dims + p.SerializeAsString(), "t.pb");
  EXPECT_EQ(t.tensor.shape, (Shape{2, 1}));
  EXPECT_EQ(t.tensor.data, (std::vector<float>{3.0f, -1.0f}));
}

std::string Proto(std::vector<int64_t> dims, onnx::TensorProto::DataType type, size_t raw_bytes) {
  onnx::TensorProto p;
  for (int64_t d : dims) p.add_dims(d);
  p.set_data_type(type);
  p.set_raw_data(std::string(raw_bytes, '\0'));
  return p.SerializeAsString();
}

TEST(TensorProto, MalformedFilesAreClearErrors) {
  auto err = [](const std::string& bytes) {
    return ErrorOf([&] { DecodeTensorProto(bytes, "t.pb"); });
  };
  constexpr auto kFloat = onnx::TensorProto::FLOAT;
  EXPECT_EQ(err(Proto({2}, onnx::TensorProto::INT64, 16)),
            "t.pb: TensorProto data_type 7 is not FLOAT (1); fusefuzz tensors are float32");
  EXPECT_EQ(err(Proto({2}, kFloat, 4)), "t.pb: TensorProto raw_data has 4 bytes, the dims need 8");
  EXPECT_EQ(err(Proto({}, kFloat, 4)),
            "t.pb: TensorProto has no dims (fusefuzz tensors have rank 1..4)");
  EXPECT_EQ(err(Proto({1, 1, 1, 1, 1}, kFloat, 4)), "t.pb: TensorProto has more than 4 dims");
  // Huge dims are refused before the tensor is allocated.
  EXPECT_EQ(err(Proto({1 << 20, 1 << 20}, kFloat, 0)),
            "t.pb: TensorProto declares 1099511627776 elements, over the limit of 16777216");
  EXPECT_EQ(err(Proto({-1}, kFloat, 0)), "t.pb: TensorProto dim -1 outside [1, 16777216]");
  std::string good = Proto({2}, kFloat, 8);
  EXPECT_EQ(err(good.substr(0, good.size() - 3)),
            "t.pb: malformed TensorProto (libprotobuf cannot parse it)");
  EXPECT_EQ(err("\xff"), "t.pb: malformed TensorProto (libprotobuf cannot parse it)");
  EXPECT_EQ(ErrorOf([] { ReadTensorProtoFile("/nonexistent/x.pb"); }),
            "/nonexistent/x.pb: cannot open file: No such file or directory");
}

TEST(BackendTestData, WritesAndReadsTheLayout) {
  Graph g = ParseGraph(kPreluGraph);
  fs::path dir = fs::temp_directory_path() / "fusefuzz_onnx_test_backend";
  fs::remove_all(dir);
  TensorMap in = {{"x", Tensor({1, 3, 2, 2}, 0.5f)}};
  TensorMap out = {{"y", Tensor({1, 3, 2, 2}, 0.25f)}};
  WriteBackendTestData(dir.string(), g, in, out);
  EXPECT_TRUE(fs::exists(dir / "test_data_set_0" / "input_0.pb"));
  EXPECT_TRUE(fs::exists(dir / "test_data_set_0" / "output_0.pb"));
  TensorMap back = ReadBackendTestData((dir / "test_data_set_0").string(), {"x"}, "input");
  EXPECT_TRUE(back.at("x").BitwiseEquals(in.at("x")));
  EXPECT_NE(ErrorOf([&] {
              ReadBackendTestData((dir / "test_data_set_0").string(), {"z"}, "input");
            }).find("TensorProto is named 'x', expected 'z'"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([&] { WriteBackendTestData(dir.string(), g, {}, out); }),
            "inputs: missing graph input 'x'");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
