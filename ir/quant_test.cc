// Quantized IR: QuantParams validation, the verifier's quant checks (one negative test per
// condition), JSON round trip, and malformed files refused with the JSON pointer of the field.
#include "ir/quant.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/printers.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

TEST(Quant, OnnxQuantizeRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(QuantizeOnnx(0.25f, 0.5f, 0, QuantType::kUint8), 0);   // 0.5 -> 0
  EXPECT_EQ(QuantizeOnnx(0.75f, 0.5f, 0, QuantType::kUint8), 2);   // 1.5 -> 2
  EXPECT_EQ(QuantizeOnnx(-0.75f, 0.5f, 10, QuantType::kInt8), 8);  // -1.5 -> -2
  EXPECT_EQ(QuantizeOnnx(1000.f, 1.f, 0, QuantType::kInt8), 127);
  EXPECT_EQ(QuantizeOnnx(-1000.f, 1.f, 0, QuantType::kInt8), -128);
  EXPECT_EQ(QuantizeOnnx(-1.f, 1.f, 0, QuantType::kUint8), 0);
  EXPECT_EQ(QuantizeOnnx(INFINITY, 1.f, 0, QuantType::kUint8), 255);
  EXPECT_EQ(DequantizeOnnx(130.f, 0.5f, 128), 1.0f);
  // x / s is a float32 division: 0.3f / 0.1f is 3.0000002 in float32, not a tie issue but the
  // float32 quotient decides.
  EXPECT_EQ(QuantizeOnnx(0.3f, 0.1f, 0, QuantType::kUint8), 3);
}

TEST(Quant, OnGridIsWhatDequantizeProduces) {
  int64_t q = 0;
  const float s = 0.01f;
  const float v = DequantizeOnnx(-37.f, s, 0);
  EXPECT_TRUE(OnGrid(v, s, 0, QuantType::kInt8, &q));
  EXPECT_EQ(q, -37);
  EXPECT_FALSE(OnGrid(std::nextafter(v, 0.f), s, 0, QuantType::kInt8));
  EXPECT_FALSE(OnGrid(DequantizeOnnx(-129.f, s, 0), s, 0, QuantType::kInt8));  // out of range
  EXPECT_TRUE(OnGrid(DequantizeOnnx(3.f, 0.5f, 255), 0.5, 255, QuantType::kUint8, &q));
  EXPECT_EQ(q, 3);
  EXPECT_FALSE(OnGrid(static_cast<float>(kMaxExactInt + 2), 1.0, 0, QuantType::kInt32));
}

// An int32 bias with a large zero point (a fuzzed QDQ model): q - z = 16,779,177 is beyond 2^24.
// ONNX Runtime subtracts in integers and rounds once; subtracting in float32 rounds q and z
// first. OnGrid must find the integer that dequantizes back to the same float, or an exported
// bias imports one ulp off (found by onnx_import_fuzzer's round-trip invariant).
TEST(Quant, Int32DequantizeSubtractsInIntegersAndOnGridInvertsIt) {
  const int64_t z = -16777216, q = 1961;
  const float s = 0.000125f;
  EXPECT_EQ(DequantizeOnnxInt(q, s, z), static_cast<float>(int64_t{16779177}) * s);
  for (int64_t k = 0; k < 64; ++k) {
    const float v = DequantizeOnnxInt(q + k, s, z);
    int64_t back = 0;
    ASSERT_TRUE(OnGrid(v, s, z, QuantType::kInt32, &back)) << k;
    EXPECT_EQ(DequantizeOnnxInt(back, s, z), v) << k;
  }
  // A scale that float32 does not hold: the grid is that of the float32 scale ONNX stores.
  const double s64 = 0.1;
  int64_t back = 0;
  ASSERT_TRUE(OnGrid(DequantizeOnnxInt(7, 0.1f, 0), s64, 0, QuantType::kInt8, &back));
  EXPECT_EQ(back, 7);
}

TEST(Quant, ValidateNamesTheField) {
  auto err = [](QuantParams q, int64_t channels, bool neg) -> std::string {
    try {
      Validate(q, channels, neg, "here");
    } catch (const InputError& e) {
      return e.what();
    }
    return "<no error>";
  };
  QuantParams ok = PerTensor(QuantType::kUint8, 0.05f, 128);
  EXPECT_EQ(err(ok, -1, false), "<no error>");
  QuantParams q = ok;
  q.scale = {0};
  EXPECT_EQ(err(q, -1, false), "here scale[0]: must not be 0");
  q.scale = {-0.5};
  EXPECT_NE(err(q, -1, false).find("here scale[0]: must be > 0"), std::string::npos);
  EXPECT_EQ(err(q, -1, true), "<no error>");
  q.scale = {NAN};
  EXPECT_NE(err(q, -1, false).find("here scale[0]: must be finite"), std::string::npos);
  q.scale = {INFINITY};
  EXPECT_NE(err(q, -1, true).find("must be finite"), std::string::npos);
  q.scale = {0.1};  // a double that is not a float32 value
  EXPECT_NE(err(q, -1, false).find("must be a float32 value"), std::string::npos);
  q = ok;
  q.zero_point = {256};
  EXPECT_EQ(err(q, -1, false), "here zero_point[0]: 256 is outside the uint8 range [0, 255]");
  q.type = QuantType::kInt8;
  q.zero_point = {-129};
  EXPECT_NE(err(q, -1, false).find("int8 range [-128, 127]"), std::string::npos);
  q = ok;
  q.scale = {0.5, 0.25};
  q.zero_point = {0, 0};
  EXPECT_NE(err(q, -1, false).find("per tensor (no axis) needs exactly one scale"),
            std::string::npos);
  q.axis = 0;
  EXPECT_EQ(err(q, 2, false), "<no error>");
  EXPECT_NE(err(q, 3, false).find("here scale: per axis 0 needs 3 entries"), std::string::npos);
  q.zero_point = {0};
  EXPECT_NE(err(q, 2, false).find("scale has 2 entries but zero_point has 1"), std::string::npos);
  q = ok;
  q.axis = 4;
  try {
    ValidateFor(q, {1, 3, 4, 4}, false, "here");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "here axis: 4 is not a dimension of [1,3,4,4]");
  }
}

TEST(Quant, ChannelOfElement) {
  QuantParams q = PerTensor(QuantType::kInt8, 1, 0);
  q.axis = 1;
  q.scale = {1, 1, 1};
  q.zero_point = {0, 0, 0};
  EXPECT_EQ(QuantChannel(q, {2, 3, 2, 2}, 0), 0);
  EXPECT_EQ(QuantChannel(q, {2, 3, 2, 2}, 4), 1);
  EXPECT_EQ(QuantChannel(q, {2, 3, 2, 2}, 12 + 11), 2);
  EXPECT_EQ(QuantText(q), "i8 axis=1 s=[1,1,1] z=[0,0,0]");
  EXPECT_EQ(QuantText(PerTensor(QuantType::kUint8, 0.05f, 128)), "u8 s=0.0500000007 z=128");
}

// The per-element walk visits every element once, in order, with its channel's parameters:
// the same as QuantChannel of each index, for every axis of a rank-1..4 shape and per tensor.
TEST(Quant, ForEachQuantElementGivesEachElementItsChannel) {
  for (const Shape& shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 1, 4}, Shape{1, 2, 3, 2}}) {
    for (int64_t axis = -1; axis < static_cast<int64_t>(shape.size()); ++axis) {
      QuantParams q = PerTensor(QuantType::kInt8, 0.5, -3);
      if (axis >= 0) {
        q.axis = axis;
        q.scale.clear();
        q.zero_point.clear();
        for (int64_t c = 0; c < shape[static_cast<size_t>(axis)]; ++c) {
          q.scale.push_back(0.25 * static_cast<double>(c + 1));
          q.zero_point.push_back(c - 2);
        }
      }
      size_t next = 0;
      ForEachQuantElement(q, shape, [&](size_t i, double s, int64_t z) {
        ASSERT_EQ(i, next++);
        const int64_t c = QuantChannel(q, shape, static_cast<int64_t>(i));
        EXPECT_EQ(s, q.Scale(c)) << ShapeToString(shape) << " axis " << axis << " i " << i;
        EXPECT_EQ(z, q.ZeroPoint(c)) << ShapeToString(shape) << " axis " << axis << " i " << i;
      });
      EXPECT_EQ(next, static_cast<size_t>(NumElements(shape)));
    }
  }
  QuantParams bad = PerTensor(QuantType::kInt8, 1, 0);
  bad.axis = 2;
  EXPECT_THROW(ForEachQuantElement(bad, {3, 4}, [](size_t, double, int64_t) {}), std::logic_error);
}

// --- graphs ---

constexpr const char* kHead = R"({"format": "fusefuzz-graph", "version": 2, )";

// x [1,2,4,4] -> Q(u8) -> QLinearConv(W int8 per channel, B) + Relu -> DQ, and a QDQ Conv.
std::string QGraph(
    const std::string& q_y = R"({"type": "uint8", "scale": [0.05], "zero_point": [128]})",
    const std::string& options = "") {
  return std::string(kHead) + options + R"("inputs": [{"name": "x", "shape": [1, 2, 4, 4]}],
  "nodes": [
    {"name": "q", "op": "QuantizeLinear", "inputs": ["x"], "outputs": ["xq"],
     "quant": {"y": )" +
         q_y + R"(}},
    {"name": "qc", "op": "QLinearConv", "inputs": ["xq"], "outputs": ["yq"],
     "params": {"W": {"shape": [2, 2, 1, 1], "data": [1, -2, 127, -128]},
                "B": {"shape": [2], "data": [100, -7]}},
     "epilogue": [{"kind": "activation", "op": "Relu"}],
     "quant": {"x": {"type": "uint8", "scale": [0.05], "zero_point": [128]},
               "w": {"type": "int8", "scale": [0.01, 0.02], "zero_point": [0, 0], "axis": 0},
               "y": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}},
    {"name": "dq", "op": "DequantizeLinear", "inputs": ["yq"], "outputs": ["y"],
     "quant": {"x": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}},
    {"name": "conv", "op": "Conv", "inputs": ["y"], "outputs": ["z"],
     "params": {"W": {"shape": [1, 2, 1, 1], "data": [0.5, -0.25]},
                "B": {"shape": [1], "data": [0.75]}},
     "quant": {"W": {"type": "int8", "scale": [0.25], "zero_point": [0]},
               "B": {"type": "int32", "scale": [0.25], "zero_point": [0]}}},
    {"name": "add", "op": "QLinearAdd", "inputs": ["xq", "xq"], "outputs": ["aq"],
     "attrs": {"activation": "relu"},
     "quant": {"a": {"type": "uint8", "scale": [0.05], "zero_point": [128]},
               "b": {"type": "uint8", "scale": [0.05], "zero_point": [128]},
               "y": {"type": "uint8", "scale": [0.1], "zero_point": [0]}}}
  ],
  "outputs": ["z", "yq", "aq"]})";
}

std::string ReadErr(const std::string& text) {
  try {
    ParseGraph(text, "q.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(QuantGraph, ReadsVerifiesAndRoundTrips) {
  Graph g = ParseGraph(QGraph(), "q.json");
  ASSERT_EQ(g.nodes.size(), 5u);
  const QuantParams& w = g.nodes[1].quant.at("w");
  EXPECT_EQ(w.axis, 0);
  EXPECT_EQ(w.scale[1], static_cast<double>(0.02f));
  EXPECT_EQ(g.nodes[0].quant.at("y").zero_point[0], 128);
  const std::string text = WriteGraph(g);
  Graph back = ParseGraph(text, "back.json");
  EXPECT_EQ(back, g);
  EXPECT_EQ(WriteGraph(back), text);
  EXPECT_EQ(Fingerprint(back), Fingerprint(g));
  // Quantization parameters are part of the identity of a graph.
  Graph other = g;
  other.nodes[0].quant.at("y").zero_point[0] = 127;
  EXPECT_NE(Fingerprint(other), Fingerprint(g));
  const std::string t = ToText(g);
  EXPECT_NE(t.find("y:q(u8 s=0.0500000007 z=128)"), std::string::npos) << t;
  EXPECT_NE(ToDot(g).find("w: q(i8 axis=0 s=[0.00999999978,0.0199999996] z=[0,0])"),
            std::string::npos);
}

TEST(QuantGraph, NegativeScaleOnlyWithTheOption) {
  const std::string neg = R"({"type": "uint8", "scale": [-0.05], "zero_point": [128]})";
  EXPECT_NE(
      ReadErr(QGraph(neg))
          .find("q.json: /nodes/0/quant/y/scale/0: node 'q' (QuantizeLinear) quant 'y' scale[0]: "
                "must be > 0"),
      std::string::npos)
      << ReadErr(QGraph(neg));
  const std::string opt = R"("options": {"allow_negative_scale": true}, )";
  Graph g = ParseGraph(QGraph(neg, opt), "q.json");
  EXPECT_TRUE(g.options.allow_negative_scale);
  EXPECT_EQ(ParseGraph(WriteGraph(g)), g);  // the option is written back
  EXPECT_NE(ReadErr(QGraph(neg, R"("options": {"allow_negative": true}, )"))
                .find("q.json: /options/allow_negative: unknown key in graph options"),
            std::string::npos);
}

// One edit of the valid graph's text and the message it must produce.
struct Bad {
  const char* name;
  std::string from, to;
  std::string expect;
};

TEST(QuantGraph, MalformedNamesThePath) {
  const std::vector<Bad> cases = {
      {"zero_scale", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": [0], "zero_point": [128]})",
       "q.json: /nodes/0/quant/y/scale/0: node 'q' (QuantizeLinear) quant 'y' scale[0]: must not "
       "be 0"},
      {"nan_scale", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": ["nan"], "zero_point": [128]})",
       "/nodes/0/quant/y/scale/0: node 'q' (QuantizeLinear) quant 'y' scale[0]: must be finite"},
      {"inf_scale", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": ["inf"], "zero_point": [128]})", "/nodes/0/quant/y/scale/0"},
      {"huge_scale", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": [1e39], "zero_point": [128]})",
       "q.json: /nodes/0/quant/y/scale/0: outside the float32 range"},
      {"zp_range", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": [0.05], "zero_point": [256]})",
       "q.json: /nodes/0/quant/y/zero_point/0: node 'q' (QuantizeLinear) quant 'y' zero_point[0]: "
       "256 is outside the uint8 range [0, 255]"},
      {"zp_fraction", R"("scale": [0.05], "zero_point": [128]})",
       R"("scale": [0.05], "zero_point": [127.5]})",
       "q.json: /nodes/0/quant/y/zero_point/0: a zero point must be an integer, got 127.5"},
      {"type_int16", R"({"type": "uint8", "scale": [0.05], "zero_point": [128]}})",
       R"({"type": "int16", "scale": [0.05], "zero_point": [128]}})",
       "q.json: /nodes/0/quant/y/type: unsupported quantization type \"int16\""},
      {"unknown_role", R"("quant": {"y": )", R"("quant": {"z": )",
       "q.json: /nodes/0/quant/z: unknown quantization role \"z\" for QuantizeLinear (valid: y)"},
      {"unknown_key", R"({"type": "uint8", "scale": [0.05], "zero_point": [128]}})",
       R"({"type": "uint8", "scale": [0.05], "zero_point": [128], "block": 32}})",
       "q.json: /nodes/0/quant/y/block: unknown key in quantization parameters"},
      {"per_axis_length", R"("scale": [0.01, 0.02], "zero_point": [0, 0], "axis": 0)",
       R"("scale": [0.01, 0.02, 0.03], "zero_point": [0, 0, 0], "axis": 0)",
       "q.json: /nodes/1/quant/w/scale: node 'qc' (QLinearConv) quant 'w' scale: per axis 0 needs "
       "2 entries"},
      {"axis_invalid", R"("scale": [0.01, 0.02], "zero_point": [0, 0], "axis": 0)",
       R"("scale": [0.01, 0.02], "zero_point": [0, 0], "axis": 5)",
       "q.json: /nodes/1/quant/w/axis: node 'qc' (QLinearConv) quant 'w' axis: must be 0 (per "
       "output channel)"},
      {"q_axis_invalid", R"({"type": "uint8", "scale": [0.05], "zero_point": [128]}})",
       R"({"type": "uint8", "scale": [0.05], "zero_point": [128], "axis": 4}})",
       "q.json: /nodes/0/quant/y/axis: node 'q' (QuantizeLinear) quant 'y' axis: 4 is not a "
       "dimension of [1,2,4,4]"},
      {"q_per_axis_length", R"({"type": "uint8", "scale": [0.05], "zero_point": [128]}})",
       R"({"type": "uint8", "scale": [0.05], "zero_point": [128], "axis": 1}})",
       "q.json: /nodes/0/quant/y/scale: node 'q' (QuantizeLinear) quant 'y' scale: per axis 1 "
       "needs 2 entries (the dimension), got 1"},
      {"axis_negative", R"("scale": [0.01, 0.02], "zero_point": [0, 0], "axis": 0)",
       R"("scale": [0.01, 0.02], "zero_point": [0, 0], "axis": -1)",
       "q.json: /nodes/1/quant/w/axis: must be >= 0"},
      {"w_zero_point", R"("zero_point": [0, 0], "axis": 0)", R"("zero_point": [0, 3], "axis": 0)",
       "q.json: /nodes/1/quant/w/zero_point/1: node 'qc' (QLinearConv) quant 'w' zero_point[1]: "
       "must be 0 (symmetric weights), got 3"},
      {"w_not_integer", R"([1, -2, 127, -128])", R"([1, -2.5, 127, -128])",
       "node 'qc' (QLinearConv): param 'W' element 1 is -2.5: must be an integer in [-128, 127]"},
      {"w_out_of_range", R"([1, -2, 127, -128])", R"([1, -2, 128, -128])",
       "param 'W' element 2 is 128: must be an integer in [-128, 127]"},
      {"bias_beyond_2_24", R"([100, -7])", R"([100, 16777218])",
       "param 'B' element 1 is 16777218: must be an integer in [-16777216, 16777216]"},
      {"missing_role", R"("y": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}},)",
       R"("yy": {"type": "int8", "scale": [0.1], "zero_point": [-3]}}},)",
       "/nodes/1/quant/yy: unknown quantization role \"yy\" for QLinearConv"},
      {"x_per_axis", R"("x": {"type": "uint8", "scale": [0.05], "zero_point": [128]},)",
       R"("x": {"type": "uint8", "scale": [0.05, 0.05], "zero_point": [128, 128], "axis": 1},)",
       "/nodes/1/quant/x/axis: node 'qc' (QLinearConv) quant 'x' axis: must be per tensor"},
      {"weight_off_grid", R"("data": [0.5, -0.25]})", R"("data": [0.5, -0.26]})",
       "node 'conv' (Conv): param 'W' element 1 = -0.25999999 is not on its declared grid (s=0.25, "
       "z=0: position -1.03999996)"},
      {"bias_off_grid", R"("data": [0.75]})", R"("data": [0.8]})",
       "node 'conv' (Conv): param 'B' element 0 = 0.800000012 is not on its declared grid"},
      {"bias_grid_int8", R"("B": {"type": "int32")", R"("B": {"type": "int8")",
       "/nodes/3/quant/B/type: node 'conv' (Conv) quant 'B' type: a bias grid must be int32"},
      {"declared_absent",
       "\"data\": [0.5, -0.25]},\n                \"B\": {\"shape\": [1], \"data\": [0.75]}}",
       "\"data\": [0.5, -0.25]}}",
       "node 'conv' (Conv): quant 'B' declares a grid for param 'B', which is absent"},
      {"add_activation", R"("activation": "relu")", R"("activation": "relu6")",
       "node 'add' (QLinearAdd): activation must be \"none\" or \"relu\""},
      {"conv_epilogue_sigmoid", R"("op": "Relu"}])", R"("op": "Sigmoid"}])",
       "epilogue step 0: Sigmoid cannot be folded into the integer clamp"},
      {"options_not_bool", R"("inputs": [{"name": "x")",
       R"("options": {"allow_negative_scale": 1}, "inputs": [{"name": "x")",
       "q.json: /options/allow_negative_scale: must be true or false"},
      {"quant_on_relu", R"({"name": "dq", "op": "DequantizeLinear")",
       R"({"name": "r", "op": "Relu", "inputs": ["z"], "outputs": ["rr"], "quant": {"y": {}}},
          {"name": "dq", "op": "DequantizeLinear")",
       "q.json: /nodes/2/quant/y: unknown quantization role \"y\" for Relu (valid: none)"},
  };
  for (const Bad& c : cases) {
    std::string text = QGraph();
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.name;
    text.replace(at, c.from.size(), c.to);
    const std::string e = ReadErr(text);
    EXPECT_NE(e.find(c.expect), std::string::npos)
        << c.name << "\n  got: " << e << "\n  want: " << c.expect;
  }
}

// Verifier checks on graphs built in code (no JSON): the conditions JSON cannot express.
TEST(QuantGraph, VerifierOnBuiltGraphs) {
  Graph g = ParseGraph(QGraph(), "q.json");
  auto err = [](const Graph& h) -> std::string {
    try {
      VerifyGraph(h);
    } catch (const InputError& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(err(g), "<no error>");
  Graph a = g;
  a.nodes[0].quant.clear();
  EXPECT_NE(err(a).find("node 'q' (QuantizeLinear): missing quantization parameters 'y'"),
            std::string::npos);
  Graph b = g;
  b.nodes[0].quant.at("y").type = QuantType::kInt32;
  EXPECT_NE(err(b).find("quant 'y' type: must be uint8 or int8"), std::string::npos);
  Graph c = g;
  c.nodes[1].quant.at("y").scale = {-0.125};
  c.options.allow_negative_scale = true;  // still refused: only Q/DQ take negative scales
  EXPECT_NE(err(c).find("node 'qc' (QLinearConv) quant 'y' scale[0]: must be > 0"),
            std::string::npos);
  Graph d = g;
  d.nodes[1].quant["r"] = d.nodes[1].quant.at("x");
  EXPECT_NE(err(d).find("quant 'r' given but the node has no residual input"), std::string::npos);
  Graph e = g;  // a residual input without its add step and parameters
  e.nodes[1].inputs.push_back("xq");
  EXPECT_NE(err(e).find("epilogue step 0 must add the residual input 1"), std::string::npos);
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  e.nodes[1].epilogue.insert(e.nodes[1].epilogue.begin(), add);
  EXPECT_NE(err(e).find("missing quantization parameters 'r'"), std::string::npos);
  e.nodes[1].quant["r"] = e.nodes[1].quant.at("x");
  EXPECT_EQ(err(e), "<no error>");  // 1x1 conv, 2 -> 2 channels: the residual has its shape
  e.inputs.push_back({"x2", {1, 2, 2, 2}});
  e.nodes[1].inputs[1] = "x2";
  EXPECT_NE(err(e).find("residual input 1 [1,2,2,2] must have the output's shape [1,2,4,4]"),
            std::string::npos);
  Graph f = g;  // QLinearAdd of unequal shapes
  f.inputs.push_back({"x2", {1, 2, 2, 2}});
  f.nodes[4].inputs[1] = "x2";
  EXPECT_NE(err(f).find("must have equal shapes (no broadcasting)"), std::string::npos);
}

// Issue 44 item 4: a uint8 QuantizeLinear output read by a DequantizeLinear declared int8 (or
// int32) verified, and failed at run time for some data only.
TEST(QuantGraph, TypesOfAQuantizedValueAgree) {
  const std::string text = QGraph();
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  // The QLinearAdd's "a" reads q's uint8 output as int8.
  const std::string e =
      ReadErr(edited(R"("a": {"type": "uint8", "scale": [0.05], "zero_point": [128]})",
                     R"("a": {"type": "int8", "scale": [0.05], "zero_point": [0]})"));
  EXPECT_EQ(e.rfind("q.json: ", 0), 0u) << e;
  EXPECT_NE(e.find("node 'add' (QLinearAdd) quant 'a' type: reads 'xq' as int8, but it "
                   "holds the uint8 output of node 'q' (QuantizeLinear)"),
            std::string::npos)
      << e;
  // The DequantizeLinear reads qc's int8 output as int32.
  const std::string f = ReadErr(edited(R"("x": {"type": "int8", "scale": [0.1])",
                                       R"("x": {"type": "int32", "scale": [0.1])"));
  EXPECT_NE(f.find("node 'dq' (DequantizeLinear) quant 'x' type: reads 'yq' as int32, but it "
                   "holds the int8 output of node 'qc' (QLinearConv)"),
            std::string::npos)
      << f;
}

// Issue 44 item 6: scales whose float32 product overflows gave false MISMATCHes: outside the
// domain, refused naming the node and the scales.
TEST(QuantGraph, ScaleProductsStayInFloat32) {
  Graph g = ParseGraph(QGraph(), "q.json");
  auto err = [](const Graph& h) -> std::string {
    try {
      VerifyGraph(h);
    } catch (const InputError& e) {
      return e.what();
    }
    return "<no error>";
  };
  Graph a = g;  // QLinearConv: s_x * s_w overflows (the producer and the add agree on s_x)
  for (QuantParams* q : {&a.nodes[0].quant.at("y"), &a.nodes[1].quant.at("x"),
                         &a.nodes[4].quant.at("a"), &a.nodes[4].quant.at("b")}) {
    q->scale = {static_cast<double>(1e30f)};
  }
  for (double& s : a.nodes[1].quant.at("w").scale) s = static_cast<double>(1e10f);
  EXPECT_NE(err(a).find("node 'qc' (QLinearConv): the scale product s_x * s_w"), std::string::npos)
      << err(a);
  EXPECT_NE(err(a).find("overflows float32"), std::string::npos) << err(a);
  Graph b = g;  // DQ -> Conv with a weight grid: s_x * s_W underflows
  b.nodes[1].quant.at("y").scale = {static_cast<double>(2e-38f)};
  b.nodes[2].quant.at("x").scale = {static_cast<double>(2e-38f)};
  EXPECT_NE(err(b).find("node 'conv' (Conv): the scale product s_x * s_W"), std::string::npos)
      << err(b);
  EXPECT_NE(err(b).find("underflows float32"), std::string::npos) << err(b);
}

TEST(QuantGraph, OlderFilesWithoutQuantStayValid) {
  const std::string v1 = R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 1, 2, 2]}],
    "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  Graph g = ParseGraph(v1);
  EXPECT_TRUE(g.nodes[0].quant.empty());
  EXPECT_EQ(WriteGraph(g).find("quant"), std::string::npos);
  EXPECT_EQ(WriteGraph(g).find("options"), std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
