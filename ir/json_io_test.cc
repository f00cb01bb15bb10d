// Graph JSON: seeds load, write -> read -> write is byte-identical, special floats survive both
// writers, nodes are sorted topologically, errors point into the file.
#include "ir/json_io.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "ir/verifier.h"

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

TEST(Seeds, AllLoadAndRoundTripBothWriters) {
  auto files = SeedFiles();
  ASSERT_GE(files.size(), 12u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    Graph g = ReadGraphFile(f);
    EXPECT_FALSE(g.nodes.empty());
    for (bool plain : {false, true}) {
      WriteOptions o;
      o.plain = plain;
      std::string a = WriteGraph(g, o);
      Graph g2 = ParseGraph(a, "a");
      EXPECT_EQ(g2, g);
      std::string b = WriteGraph(g2, o);
      EXPECT_EQ(a, b);
      o.indent = -1;
      EXPECT_EQ(ParseGraph(WriteGraph(g, o)), g);
    }
  }
}

TEST(Seeds, ScenariosHaveTheirShape) {
  std::string dir = std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/";
  Graph glow = ReadGraphFile(dir + "glow-conv-relu-bn.json");
  ASSERT_EQ(glow.nodes.size(), 3u);
  EXPECT_EQ(glow.nodes[0].op, Op::Conv);
  EXPECT_EQ(glow.nodes[1].op, Op::Relu);
  EXPECT_EQ(glow.nodes[2].op, Op::BatchNorm);
  Graph rb = ReadGraphFile(dir + "resnet-basicblock-relu-after-add.json");
  ASSERT_EQ(rb.nodes.size(), 7u);
  EXPECT_EQ(rb.nodes[5].op, Op::Add);
  EXPECT_EQ(rb.nodes[5].inputs[1], "x");
  EXPECT_EQ(rb.nodes[6].op, Op::Relu);
  Graph f = ReadGraphFile(dir + "op-fusedconv.json");
  ASSERT_EQ(f.nodes[0].epilogue.size(), 6u);
  EXPECT_EQ(f.nodes[0].epilogue[1].kind, EpilogueKind::kAdd);
  EXPECT_EQ(f.nodes[0].epilogue[1].input, 1);
  EXPECT_EQ(f.nodes[0].epilogue[3].act, Op::PRelu);
  EXPECT_EQ(VerifyGraph(f).at("y"), (Shape{1, 3, 4, 4}));
}

Graph SpecialValuesGraph() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float denorm = std::numeric_limits<float>::denorm_min();
  Graph g;
  g.inputs = {{"x", {1, 2, 2, 2}}};
  Node n;
  n.name = "mul";
  n.op = Op::Mul;
  n.inputs = {"x"};
  n.output = "y";
  // The verifier requires finite binary constants, but PRelu's slope may be anything; the
  // special values go into a second node's params that the verifier does not range-check.
  n.params["B"] = Tensor({1, 2, 1, 1}, {-0.0f, denorm});
  Node p;
  p.name = "prelu";
  p.op = Op::PRelu;
  p.inputs = {"y"};
  p.output = "z";
  p.params["slope"] = Tensor({2, 1, 1}, {nan, -inf});
  Node c;
  c.name = "clip";
  c.op = Op::Clip;
  c.inputs = {"z"};
  c.output = "w";
  c.attrs = {{"min", -std::numeric_limits<double>::infinity()}, {"max", 0.1}};
  Node b;
  b.name = "bn";
  b.op = Op::BatchNorm;
  b.inputs = {"w"};
  b.output = "v";
  b.params = {{"scale", Tensor({2}, {0.1f, 3.4028235e38f})},
              {"bias", Tensor({2}, {-1.17549435e-38f, 16777217.0f})},
              {"mean", Tensor({2}, {1e-45f, -3.0f})},
              {"var", Tensor({2}, {0.0f, 1.0f / 3.0f})}};
  g.nodes = {n, p, c, b};
  g.outputs = {"v"};
  return g;
}

TEST(RoundTrip, SpecialFloatsBitExactInBothWriters) {
  Graph g = SpecialValuesGraph();
  VerifyGraph(g);
  for (bool plain : {false, true}) {
    SCOPED_TRACE(plain ? "plain" : "b64");
    WriteOptions o;
    o.plain = plain;
    std::string a = WriteGraph(g, o);
    Graph g2 = ParseGraph(a);
    std::string b = WriteGraph(g2, o);
    EXPECT_EQ(a, b);
    ASSERT_EQ(g2.nodes.size(), 4u);
    EXPECT_TRUE(g2.nodes[0].params.at("B").BitwiseEquals(g.nodes[0].params.at("B")));
    EXPECT_TRUE(std::signbit(g2.nodes[0].params.at("B").data[0]));
    const auto& slope = g2.nodes[1].params.at("slope").data;
    EXPECT_TRUE(std::isnan(slope[0]));
    EXPECT_EQ(slope[1], -std::numeric_limits<float>::infinity());
    EXPECT_EQ(std::get<double>(g2.nodes[2].attrs.at("min")),
              -std::numeric_limits<double>::infinity());
    for (const auto& [name, t] : g.nodes[3].params) {
      EXPECT_TRUE(g2.nodes[3].params.at(name).BitwiseEquals(t)) << name;
    }
  }
  // b64 keeps NaN payloads exactly.
  Graph h = g;
  h.nodes[1].params["slope"].data[0] = std::bit_cast<float>(0xffc01234u);
  Graph h2 = ParseGraph(WriteGraph(h));
  EXPECT_EQ(std::bit_cast<uint32_t>(h2.nodes[1].params.at("slope").data[0]), 0xffc01234u);
}

TEST(RoundTrip, PlainWriterUsesShortestDecimals) {
  Tensor t({4}, {0.1f, -0.0f, 3.4028235e38f, 1e-45f});
  WriteOptions o;
  o.plain = true;
  EXPECT_EQ(TensorToJson(t, o).dump(), R"({"data":[0.1,-0.0,3.4028235e+38,1e-45],"shape":[4]})");
  Tensor back = ReadTensor(TensorToJson(t, o), "s", "/t");
  EXPECT_TRUE(back.BitwiseEquals(t));
}

TEST(Tensors, Base64IsLittleEndianFloat32) {
  // 1.0f = 0x3f800000 -> bytes 00 00 80 3f -> "AACAPw=="
  Tensor t(Shape{1}, std::vector<float>{1.0f});
  EXPECT_EQ(TensorToJson(t).dump(), R"({"b64":"AACAPw==","shape":[1]})");
  auto j = nlohmann::json::parse(R"({"shape":[2],"b64":"AACAPwAAAMA="})");
  Tensor r = ReadTensor(j, "s", "/t");
  EXPECT_EQ(r.data, (std::vector<float>{1.0f, -2.0f}));
}

TEST(Tensors, FileRoundTripAndErrors) {
  TensorMap m;
  m["x"] = Tensor({1, 2}, {1.5f, -0.0f});
  m["a/b"] = Tensor({3}, {1, 2, 3});
  std::string path = testing::TempDir() + "/h1_tensors.json";
  WriteFileAtomic(path, WriteTensors(m));
  TensorMap back = ReadTensorsFile(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back.at("x").BitwiseEquals(m.at("x")));
  auto bad = nlohmann::json::parse(R"({"a/b": {"shape": [2], "data": [1]}})");
  EXPECT_NE(ErrorOf([&] {
              ReadTensors(bad, "t.json");
            }).find("t.json: /a~1b/data: has 1 values but shape [2] needs 2"),
            std::string::npos);
  auto graph = nlohmann::json::parse(R"({"format": "fusefuzz-graph"})");
  EXPECT_NE(ErrorOf([&] { ReadTensors(graph, "t.json"); }).find("not a tensors file"),
            std::string::npos);
  // Total bytes are counted across the file.
  Limits small;
  small.max_total_bytes = 16;
  auto two = nlohmann::json::parse(
      R"({"a": {"shape": [3], "data": [1,2,3]}, "b": {"shape": [2], "data": [1,2]}})");
  EXPECT_NE(ErrorOf([&] { ReadTensors(two, "t.json", small); }).find("/b: tensors exceed"),
            std::string::npos);
}

TEST(Reader, SortsNodesTopologicallyKeepingFileOrder) {
  std::string text = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 2, 2]}],
    "nodes": [
      {"name": "c", "op": "Relu", "inputs": ["b"], "outputs": ["y"]},
      {"name": "a", "op": "Tanh", "inputs": ["x"], "outputs": ["a"]},
      {"name": "b", "op": "Add", "inputs": ["a", "z"], "outputs": ["b"]},
      {"name": "d", "op": "Sigmoid", "inputs": ["x"], "outputs": ["z"]},
      {"name": "e", "op": "Identity", "inputs": ["x"], "outputs": ["w"]}],
    "outputs": ["y", "w"]})";
  Graph g = ParseGraph(text);
  std::vector<std::string> order;
  for (const auto& n : g.nodes) order.push_back(n.name);
  // Earliest ready node in file order first: a (1), then d (3) unblocks b, ...
  EXPECT_EQ(order, (std::vector<std::string>{"a", "d", "b", "c", "e"}));
}

TEST(Reader, CycleNamesItsNodes) {
  std::string text = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 2, 2]}],
    "nodes": [
      {"name": "head", "op": "Relu", "inputs": ["x"], "outputs": ["h"]},
      {"name": "p", "op": "Add", "inputs": ["h", "r"], "outputs": ["p"]},
      {"name": "q", "op": "Relu", "inputs": ["p"], "outputs": ["q"]},
      {"name": "r", "op": "Tanh", "inputs": ["q"], "outputs": ["r"]},
      {"name": "tail", "op": "Relu", "inputs": ["r"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  std::string e = ErrorOf([&] { ParseGraph(text, "c.json"); });
  EXPECT_NE(e.find("c.json: /nodes/1: cycle through nodes 'p' -> 'q' -> 'r' -> 'p'"),
            std::string::npos)
      << e;
}

TEST(Reader, VerifierErrorsGetSourceAndPointer) {
  std::string text = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 3, 4, 4]}],
    "nodes": [
      {"name": "r", "op": "Relu", "inputs": ["c"], "outputs": ["y"]},
      {"name": "conv", "op": "Conv", "inputs": ["x"], "outputs": ["c"], "attrs": {"group": 2},
       "params": {"W": {"shape": [2, 1, 1, 1], "data": [1, 1]}}}],
    "outputs": ["y"]})";
  std::string e = ErrorOf([&] { ParseGraph(text, "g.json"); });
  EXPECT_NE(e.find("g.json: /nodes/1: node 'conv' (Conv): input channels 3 not divisible by "
                   "group 2"),
            std::string::npos)
      << e;
}

TEST(Reader, IntegersAcceptedForFloatAttrsAndStoredAsDouble) {
  std::string text = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 2, 2]}],
    "nodes": [{"name": "c", "op": "Clip", "inputs": ["x"], "outputs": ["y"],
               "attrs": {"min": 0, "max": "inf"}}],
    "outputs": ["y"]})";
  Graph g = ParseGraph(text);
  EXPECT_EQ(std::get<double>(g.nodes[0].attrs.at("min")), 0.0);
  EXPECT_TRUE(std::isinf(std::get<double>(g.nodes[0].attrs.at("max"))));
  EXPECT_NE(WriteGraph(g).find(R"("attrs": {"max": "inf", "min": 0.0})"), std::string::npos)
      << WriteGraph(g);
}

TEST(Files, MissingFileAndSyntaxErrors) {
  std::string e = ErrorOf([] { ReadGraphFile("/nonexistent/dir/g.json"); });
  EXPECT_NE(e.find("/nonexistent/dir/g.json: cannot open file"), std::string::npos) << e;
  e = ErrorOf([] { ReadJsonFile(testing::TempDir()); });
  EXPECT_NE(e.find("is a directory"), std::string::npos) << e;
  e = ErrorOf([] { ParseJson("{\"a\": [1, 2,, 3]}", "s.json"); });
  EXPECT_NE(e.find("s.json: JSON syntax error at byte 13"), std::string::npos) << e;
}

TEST(Files, WriteFileAtomicReplacesWholeFile) {
  std::string path = testing::TempDir() + "/h1_atomic.txt";
  WriteFileAtomic(path, "first version, long");
  WriteFileAtomic(path, "second");
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(s, "second");
  for (const auto& e : fs::directory_iterator(testing::TempDir())) {
    EXPECT_EQ(e.path().filename().string().find("h1_atomic.txt.tmp"), std::string::npos);
  }
  EXPECT_NE(ErrorOf([] { WriteFileAtomic("/nonexistent/dir/x", "y"); }).find("/nonexistent/dir/x"),
            std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
