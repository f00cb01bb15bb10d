// Hostile and malformed graph files: each must be refused with an InputError whose message names
// where (JSON pointer or node) and what is wrong. Never a crash, never a huge allocation.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

const std::string kX = R"([{"name": "x", "shape": [1, 3, 4, 4]}])";

std::string G(const std::string& nodes, const std::string& outputs = R"(["y"])",
              const std::string& inputs = kX) {
  return R"({"format": "fusefuzz-graph", "version": 1, "inputs": )" + inputs + R"(, "nodes": )" +
         nodes + R"(, "outputs": )" + outputs + "}";
}

// One node list holding a single node.
std::string One(const std::string& node) { return "[" + node + "]"; }

std::string Conv(const std::string& attrs, const std::string& params) {
  return R"({"name": "conv", "op": "Conv", "inputs": ["x"], "outputs": ["y"], "attrs": )" + attrs +
         R"(, "params": )" + params + "}";
}

// A valid W for x [1,3,4,4]: [2, 3, 1, 1].
const std::string kW = R"({"shape": [2, 3, 1, 1], "data": [1, 2, 3, 4, 5, 6]})";

std::string Act(const std::string& op, const std::string& attrs) {
  return R"({"name": "a", "op": ")" + op + R"(", "inputs": ["x"], "outputs": ["y"], "attrs": )" +
         attrs + "}";
}

struct Case {
  const char* name;
  std::string text;
  std::string expect;  // substring of the message: the location and the problem
};

std::vector<Case> Cases() {
  return {
      {"truncated", R"({"format": "fusefuzz-graph", "version": 1, "inputs": [)",
       "t.json: JSON syntax error at byte 55"},
      {"not_an_object", "[1, 2]", "t.json: /: a graph must be a JSON object, got array"},
      {"wrong_format", R"({"format": "onnx", "version": 1})",
       R"(t.json: /format: expected "fusefuzz-graph", got "onnx")"},
      {"reproducer", R"({"format": "fusefuzz-repro", "graph": {}})",
       "t.json: /format: this is a reproducer"},
      {"tensors_file", R"({"x": {"shape": [1], "data": [1]}})", "t.json: /format: missing"},
      {"version_3", R"({"format": "fusefuzz-graph", "version": 3})",
       "t.json: /version: unsupported version 3 (this build reads versions 1 and 2)"},
      {"version_string", R"({"format": "fusefuzz-graph", "version": "1"})",
       "t.json: /version: must be an integer, got string"},
      {"unknown_top_level_key",
       R"({"format": "fusefuzz-graph", "version": 1, "inputs": [], "node": [], "outputs": []})",
       "t.json: /node: unknown key in a graph"},
      {"inputs_not_array", G("[]", R"(["x"])", R"({"x": [1]})"),
       "t.json: /inputs: must be an array, got object"},
      {"unknown_op", G(One(R"({"name": "c", "op": "Convolution", "inputs": ["x"],
                                "outputs": ["y"]})")),
       R"(t.json: /nodes/0/op: unknown op "Convolution")"},
      {"op_not_string", G(One(R"({"name": "c", "op": 3, "inputs": ["x"], "outputs": ["y"]})")),
       "t.json: /nodes/0/op: must be a string, got integer"},
      {"unknown_node_key",
       G(One(R"({"name": "c", "op": "Relu", "input": ["x"], "outputs": ["y"]})")),
       "t.json: /nodes/0/input: unknown key in a node"},
      {"attr_wrong_type", G(One(Conv(R"({"group": "2"})", R"({"W": )" + kW + "}"))),
       "t.json: /nodes/0/attrs/group: must be an integer, got string"},
      {"attr_float_for_int", G(One(Conv(R"({"group": 1.5})", R"({"W": )" + kW + "}"))),
       "t.json: /nodes/0/attrs/group: must be an integer, got number"},
      {"attr_ints_wrong_element",
       G(One(Conv(R"({"pads": [0, "1", 0, 0]})", R"({"W": )" + kW + "}"))),
       "t.json: /nodes/0/attrs/pads/1: must be an integer, got string"},
      {"unknown_attr", G(One(Conv(R"({"grop": 1})", R"({"W": )" + kW + "}"))),
       R"(t.json: /nodes/0/attrs/grop: unknown attribute "grop" for Conv (valid: strides, )"
       "dilations, pads, group)"},
      {"missing_param", G(One(Conv("{}", "{}"))),
       "t.json: /nodes/0/params: missing required param 'W' of Conv"},
      {"unknown_param", G(One(Conv("{}", R"({"W": )" + kW + R"(, "bias": )" + kW + "}"))),
       R"(t.json: /nodes/0/params/bias: unknown param "bias" for Conv (valid: W, B))"},
      {"missing_attr", G(One(Act("MaxPool", "{}"))),
       "t.json: /nodes/0/attrs: missing required attribute 'kernel_shape' of MaxPool"},
      {"missing_clip_min", G(One(Act("Clip", R"({"max": 1})"))),
       "t.json: /nodes/0/attrs: missing required attribute 'min' of Clip"},
      {"w_shape_mismatch",
       G(One(Conv("{}", R"({"W": {"shape": [2, 2, 1, 1], "data": [1, 2, 3, 4]}})"))),
       "t.json: /nodes/0: node 'conv' (Conv): param 'W': expected dim 1 = C/group = 3, got 2"},
      {"bias_shape_mismatch",
       G(One(Conv("{}", R"({"W": )" + kW + R"(, "B": {"shape": [3], "data": [1, 2, 3]}})"))),
       "t.json: /nodes/0: node 'conv' (Conv): param 'B': expected shape [2], got [3]"},
      {"cycle", G(R"([{"name": "p", "op": "Add", "inputs": ["x", "q"], "outputs": ["p"]},
                     {"name": "q", "op": "Relu", "inputs": ["p"], "outputs": ["q"]},
                     {"name": "r", "op": "Relu", "inputs": ["q"], "outputs": ["y"]}])"),
       "t.json: /nodes/0: cycle through nodes 'p' -> 'q' -> 'p'"},
      {"self_loop", G(One(R"({"name": "s", "op": "Relu", "inputs": ["y"], "outputs": ["y"]})")),
       "t.json: /nodes/0: cycle through nodes 's' -> 's'"},
      {"dangling_value",
       G(One(R"({"name": "r", "op": "Relu", "inputs": ["nope"], "outputs": ["y"]})")),
       "t.json: /nodes/0: node 'r' (Relu): input 0 'nope' is not a graph input or the output of "
       "any node (dangling value)"},
      {"duplicate_node_name", G(R"([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["z"]},
             {"name": "a", "op": "Relu", "inputs": ["z"], "outputs": ["y"]}])"),
       R"(t.json: /nodes/1/name: duplicate node name "a" (also /nodes/0))"},
      {"duplicate_output_value",
       G(R"([{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]},
             {"name": "b", "op": "Tanh", "inputs": ["x"], "outputs": ["y"]}])"),
       R"(t.json: /nodes/1/outputs/0: value "y" is already defined)"},
      {"output_redefines_input",
       G(One(R"({"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["x"]})"), R"(["x"])"),
       R"(t.json: /nodes/0/outputs/0: value "x" is already defined)"},
      {"two_outputs",
       G(One(R"({"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y", "z"]})")),
       "t.json: /nodes/0/outputs: must be an array of exactly one value name"},
      {"negative_dim", G("[]", R"(["x"])", R"([{"name": "x", "shape": [1, -3, 4, 4]}])"),
       "t.json: /inputs/0/shape/1: dim must be in [1, 16777216], got -3"},
      {"zero_dim", G(One(Conv("{}", R"({"W": {"shape": [0, 3, 1, 1], "data": []}})"))),
       "t.json: /nodes/0/params/W/shape/0: dim must be in [1, 16777216], got 0"},
      {"huge_dim_uint64",
       G("[]", R"(["x"])", R"([{"name": "x", "shape": [18446744073709551615]}])"),
       "t.json: /inputs/0/shape/0: dim must be in [1, 16777216], got 18446744073709551615"},
      {"1e12_elements",
       G(One(Conv("{}", R"({"W": {"shape": [1000000, 1000000, 1, 1], "b64": ""}})"))),
       "t.json: /nodes/0/params/W/shape: shape declares more than 16777216 elements"},
      {"1e12_elements_input",
       G("[]", R"(["x"])", R"([{"name": "x", "shape": [10000, 10000, 10000]}])"),
       "t.json: /inputs/0/shape: shape declares more than 16777216 elements"},
      {"rank_5", G("[]", R"(["x"])", R"([{"name": "x", "shape": [1, 1, 1, 1, 1]}])"),
       "t.json: /inputs/0/shape: rank must be 1..4, got 5"},
      {"nan_in_shape", G("[]", R"(["x"])", R"([{"name": "x", "shape": [1, 3, "nan", 4]}])"),
       "t.json: /inputs/0/shape/2: dim must be an integer, got string"},
      {"float_in_shape", G("[]", R"(["x"])", R"([{"name": "x", "shape": [1, 3, 4.5, 4]}])"),
       "t.json: /inputs/0/shape/2: dim must be an integer, got number"},
      {"b64_wrong_length",
       G(One(Conv("{}", R"({"W": )" + kW + R"(, "B": {"shape": [2], "b64": "AACAPw=="}})"))),
       "t.json: /nodes/0/params/B/b64: base64 length 8 does not match the shape: 2 float32 "
       "values need 12 characters"},
      {"b64_invalid_char",
       G(One(Conv("{}", R"({"W": )" + kW + R"(, "B": {"shape": [2], "b64": "A*CAPwAAAMA="}})"))),
       "t.json: /nodes/0/params/B/b64: invalid base64 character at offset 1"},
      {"b64_bad_padding",
       G(One(Conv("{}", R"({"W": )" + kW + R"(, "B": {"shape": [2], "b64": "AACAPwAAAM=="}})"))),
       "t.json: /nodes/0/params/B/b64: invalid base64 padding"},
      {"data_count_mismatch",
       G(One(Conv("{}", R"({"W": {"shape": [2, 3, 1, 1], "data": [1, 2, 3]}})"))),
       "t.json: /nodes/0/params/W/data: has 3 values but shape [2,3,1,1] needs 6"},
      {"data_and_b64",
       G(One(Conv("{}", R"({"W": {"shape": [1], "data": [1], "b64": "AACAPw=="}})"))),
       "t.json: /nodes/0/params/W: tensor needs exactly one of \"data\" or \"b64\""},
      {"data_out_of_float_range",
       G(One(Conv("{}", R"({"W": {"shape": [2, 3, 1, 1], "data": [1, 2, 3, 4, 5, 1e39]}})"))),
       "t.json: /nodes/0/params/W/data/5: number out of float32 range"},
      {"data_bad_string",
       G(One(Conv("{}", R"({"W": {"shape": [2, 3, 1, 1], "data": [1, 2, 3, 4, 5, "NaN!"]}})"))),
       "t.json: /nodes/0/params/W/data/5: must be a number or \"nan\", \"inf\", \"-inf\""},
      {"nan_in_weights",
       G(One(Conv("{}", R"({"W": {"shape": [2, 3, 1, 1], "data": [1, 2, 3, 4, 5, "nan"]}})"))),
       "t.json: /nodes/0: node 'conv' (Conv): param 'W' must be finite"},
      {"group_not_dividing_c",
       G(One(Conv(R"({"group": 2})", R"({"W": {"shape": [2, 1, 1, 1], "data": [1, 2]}})"))),
       "t.json: /nodes/0: node 'conv' (Conv): input channels 3 not divisible by group 2"},
      {"kernel_larger_than_padded_input",
       G(One(Conv(R"({"pads": [1, 1, 1, 1]})",
                  R"({"W": {"shape": [1, 3, 7, 7], "b64": ")" + std::string(784, 'A') + R"("}})"))),
       "t.json: /nodes/0: node 'conv' (Conv): kernel 7x7 (with dilation and pads) does not fit"},
      {"conv_two_inputs",
       G(One(R"({"name": "conv", "op": "Conv", "inputs": ["x", "x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + "}}")),
       "t.json: /nodes/0: node 'conv' (Conv): expected 1 inputs, got 2"},
      {"reflect_pad_too_large", G(One(Act("Pad", R"({"pads": [0, 4, 0, 0], "mode": "reflect"})"))),
       "t.json: /nodes/0: node 'a' (Pad): reflect pads must be smaller than the padded dim"},
      {"pad_mode_unknown", G(One(Act("Pad", R"({"pads": [0, 1, 0, 0], "mode": "mirror"})"))),
       "t.json: /nodes/0: node 'a' (Pad): mode must be \"constant\", \"reflect\", \"edge\" or "
       "\"wrap\", got \"mirror\""},
      {"pool_pad_ge_kernel",
       G(One(Act("MaxPool", R"({"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]})"))),
       "t.json: /nodes/0: node 'a' (MaxPool): pads must be smaller than the kernel"},
      {"broadcast_mismatch",
       G(One(R"({"name": "add", "op": "Add", "inputs": ["x"], "outputs": ["y"],
                 "params": {"B": {"shape": [2], "data": [1, 2]}}})")),
       "t.json: /nodes/0: node 'add' (Add): operands [1,3,4,4] and [2] do not broadcast"},
      {"bn_negative_var",
       G(One(R"({"name": "bn", "op": "BatchNorm", "inputs": ["x"], "outputs": ["y"], "params": {
                 "scale": {"shape": [3], "data": [1, 1, 1]}, "bias": {"shape": [3], "data": [0, 0, 0]},
                 "mean": {"shape": [3], "data": [0, 0, 0]}, "var": {"shape": [3], "data": [1, -1, 1]}}})")),
       "t.json: /nodes/0: node 'bn' (BatchNorm): param 'var' must be >= 0"},
      {"graph_output_undefined", G("[]", R"(["zz"])"),
       R"(t.json: /outputs/0: graph output "zz" is not defined)"},
      {"graph_output_twice",
       G(One(R"({"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]})"), R"(["y", "y"])"),
       R"(t.json: /outputs/1: graph output "y" is listed twice)"},
      {"empty_outputs",
       G(One(R"({"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]})"), "[]"),
       "t.json: /outputs: must list at least one value"},
      {"epilogue_add_missing_input",
       G(One(R"({"name": "f", "op": "FusedConv", "inputs": ["x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + R"(}, "epilogue": [{"kind": "add", "input": 1}]})")),
       "t.json: /nodes/0/epilogue/0/input: add refers to input 1 but node 'f' has 1 input(s)"},
      {"epilogue_unknown_kind",
       G(One(R"({"name": "f", "op": "FusedConv", "inputs": ["x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + R"(}, "epilogue": [{"kind": "bias"}]})")),
       R"(t.json: /nodes/0/epilogue/0/kind: unknown epilogue kind "bias")"},
      {"epilogue_not_activation",
       G(One(R"({"name": "f", "op": "FusedConv", "inputs": ["x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + R"(}, "epilogue": [{"kind": "activation", "op": "Conv"}]})")),
       R"(t.json: /nodes/0/epilogue/0/op: "Conv" is not an activation op)"},
      {"epilogue_scale_shape",
       G(One(R"({"name": "f", "op": "FusedConv", "inputs": ["x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + R"(}, "epilogue": [{"kind": "scale_shift", "params": {
                 "scale": {"shape": [3], "data": [1, 1, 1]}, "shift": {"shape": [2], "data": [0, 0]}}}]})")),
       "t.json: /nodes/0: node 'f' (FusedConv): param 'epilogue 0 scale': expected shape [2], got "
       "[3]"},
      {"epilogue_on_conv",
       G(One(R"({"name": "c", "op": "Conv", "inputs": ["x"], "outputs": ["y"],
                 "params": {"W": )" +
             kW + R"(}, "epilogue": []})")),
       "t.json: /nodes/0/epilogue: only FusedConv, QLinearConv and Gemm have an epilogue"},
      {"gelu_fast", G(One(Act("Gelu", R"({"approximate": "fast"})"))),
       "t.json: /nodes/0: node 'a' (Gelu): Gelu approximate must be \"none\" or \"tanh\", got "
       "\"fast\""},
      {"deeply_nested_array", std::string(100000, '['),
       "t.json: JSON nested deeper than 64 levels at byte 64"},
      {"deeply_nested_in_doc", R"({"format": "fusefuzz-graph", "doc": )" + std::string(100000, '{'),
       "t.json: JSON nested deeper than 64 levels at byte 99"},
      {"invalid_utf8", std::string("{\"format\": \"fusefuzz-graph\xff\"}"),
       "t.json: JSON syntax error at byte"},
      {"empty_text", "", "t.json: JSON syntax error at byte"},
      {"number_overflow", G(One(Conv("{}", R"({"W": {"shape": [1], "data": [1e999]}})"))),
       "t.json: invalid JSON: number overflow parsing '1e999'"},
  };
}

TEST(Malformed, EveryCaseIsRefusedWithLocationAndProblem) {
  auto cases = Cases();
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      ParseGraph(c.text, "t.json");
      ADD_FAILURE() << "accepted: " << c.name;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
          << "message: " << e.what() << "\nexpected: " << c.expect;
    }
  }
}

TEST(Malformed, NodeCountLimitCheckedBeforeReadingNodes) {
  Limits l;
  l.max_nodes = 2;
  std::string three = G(R"([1, 2, 3])");  // the nodes are not even objects: never looked at
  try {
    ParseGraph(three, "t.json", l);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /nodes: 3 nodes exceed the limit of 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(Malformed, TotalBytesLimitCountsAllParams) {
  Limits l;
  l.max_total_bytes = 40;  // W (24 bytes) fits, W + B (24 + 24) does not
  std::string g = G(One(Conv(
      "{}", R"({"W": )" + kW + R"(, "B": )" + R"({"shape": [6], "data": [1, 2, 3, 4, 5, 6]}})")));
  try {
    ParseGraph(g, "t.json", l);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /nodes/0/params/W: tensors exceed the limit of "
                                         "40 bytes in total"),
              std::string::npos)
        << e.what();
  }
}

// Deterministic mutations of the seeds: whatever the bytes, the reader either returns a verified
// graph or throws InputError (no other exception type, no crash under ASan/UBSan).
TEST(Malformed, MutatedSeedsOnlyEverThrowInputError) {
  const char* tokens[] = {"nan",
                          "-1",
                          "0",
                          "1e999",
                          "[",
                          "]",
                          "{",
                          "}",
                          "\"",
                          ",",
                          "2.5",
                          "\"nan\"",
                          "18446744073709551616",
                          "null",
                          "true",
                          "\"b64\": \"\""};
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&](uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds")) {
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  int accepted = 0, refused = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string seed = ss.str();
    for (int i = 0; i < 150; ++i) {
      std::string t = seed;
      for (int k = 0, n = 1 + static_cast<int>(next(3)); k < n; ++k) {
        size_t pos = next(t.size() + 1);
        switch (next(4)) {
          case 0:
            if (pos < t.size()) t[pos] = static_cast<char>(next(256));
            break;
          case 1:
            t.erase(pos, next(40));
            break;
          case 2:
            t.insert(pos, tokens[next(std::size(tokens))]);
            break;
          default:
            t.insert(pos, t.substr(next(t.size()), next(60)));
        }
      }
      try {
        ParseGraph(t, "m.json");
        ++accepted;
      } catch (const InputError& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).rfind("m.json: ", 0), 0u) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << f << " mutation " << i << ": " << e.what() << "\n" << t;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(accepted + refused, static_cast<int>(files.size()) * 150);
}

}  // namespace
}  // namespace fusefuzz
