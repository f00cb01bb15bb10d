#include "ir/printers.h"

#include <gtest/gtest.h>

#include <bit>

#include "ir/json_io.h"

namespace fusefuzz {
namespace {

Graph FusedGraph() {
  return ParseGraph(R"({"format": "fusefuzz-graph", "version": 1,
    "inputs": [{"name": "x", "shape": [1, 2, 4, 4]}, {"name": "r", "shape": [1, 2, 4, 4]}],
    "nodes": [
      {"name": "fc", "op": "FusedConv", "inputs": ["x", "r"], "outputs": ["f"],
       "attrs": {"pads": [1, 1, 1, 1]},
       "params": {"W": {"shape": [2, 2, 3, 3], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5,
                  6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9]}},
       "epilogue": [
         {"kind": "scale_shift", "params": {"scale": {"shape": [2], "data": [1, 2]},
                                            "shift": {"shape": [2], "data": [0, 1]}}},
         {"kind": "add", "input": 1},
         {"kind": "activation", "op": "Relu6"},
         {"kind": "clamp", "attrs": {"min": 0, "max": 4}}]},
      {"name": "sub", "op": "Sub", "inputs": ["f"], "outputs": ["y"],
       "params": {"A": {"shape": [1], "data": [1]}}}],
    "outputs": ["y"]})");
}

TEST(Dot, ShowsEpilogueStepsInputsOutputsAndHighlight) {
  Graph g = FusedGraph();
  DotOptions o;
  o.highlight = {"fc"};
  o.title = "blamed \"fold\"";
  std::string dot = ToDot(g, o);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.find("\\n+ scale_shift"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\\n+ add(in1)"), std::string::npos);
  EXPECT_NE(dot.find("\\n+ Relu6"), std::string::npos);
  EXPECT_NE(dot.find("\\n+ clamp(max=4,min=0)"), std::string::npos);
  EXPECT_NE(dot.find("label=\"blamed \\\"fold\\\"\""), std::string::npos);
  // Inputs and outputs are ellipses; only the highlighted node is filled.
  EXPECT_NE(dot.find("in0 [shape=ellipse, label=\"x\\n[1,2,4,4]\"]"), std::string::npos);
  EXPECT_NE(dot.find("out0 [shape=ellipse, label=\"y\"]"), std::string::npos);
  size_t n0 = dot.find("  n0 [");
  size_t n1 = dot.find("  n1 [");
  ASSERT_NE(n0, std::string::npos);
  ASSERT_NE(n1, std::string::npos);
  EXPECT_NE(dot.substr(n0, dot.find('\n', n0) - n0).find("fillcolor"), std::string::npos);
  EXPECT_EQ(dot.substr(n1, dot.find('\n', n1) - n1).find("fillcolor"), std::string::npos);
  // Edges carry the value name and its shape; the residual is the second input.
  EXPECT_NE(dot.find("in1 -> n0 [label=\"r\\n[1,2,4,4] (in1)\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> out0"), std::string::npos);
}

TEST(Dot, BrokenGraphStillDrawn) {
  Graph g = FusedGraph();
  g.nodes[1].inputs = {"missing"};
  std::string dot = ToDot(g);
  EXPECT_NE(dot.find("?missing"), std::string::npos);
  // Without a verified graph there are no shapes on the edges.
  EXPECT_NE(dot.find("label=\"r (in1)\""), std::string::npos) << dot;
}

TEST(Text, OneLinePerNodeAfterTheSignature) {
  std::string t = ToText(FusedGraph());
  EXPECT_EQ(t,
            "graph(%x[1,2,4,4], %r[1,2,4,4]) -> (%y)\n"
            "%f = FusedConv(%x, %r) W[2,2,3,3] pads=[1,1,1,1] + scale_shift + add(%r) + Relu6 + "
            "clamp(max=4,min=0)  # fc\n"
            "%y = Sub(A[1], %f)  # sub\n");
}

TEST(Fingerprint, EqualForEqualGraphsAndSensitiveToOneBit) {
  Graph a = FusedGraph();
  Graph b = FusedGraph();
  EXPECT_EQ(Fingerprint(a), Fingerprint(b));
  EXPECT_EQ(FingerprintHex(a).size(), 16u);
  EXPECT_EQ(FingerprintHex(a), FingerprintHex(b));
  float& w = b.nodes[0].params["W"].data[7];
  w = std::bit_cast<float>(std::bit_cast<uint32_t>(w) ^ 1u);
  EXPECT_NE(Fingerprint(a), Fingerprint(b));
  EXPECT_EQ(StructuralFingerprint(a), StructuralFingerprint(b));
  // -0.0 and +0.0 differ in bits, so they differ in fingerprint.
  Graph z1 = FusedGraph(), z2 = FusedGraph();
  z1.nodes[0].epilogue[0].params["shift"].data[0] = 0.0f;
  z2.nodes[0].epilogue[0].params["shift"].data[0] = -0.0f;
  EXPECT_NE(Fingerprint(z1), Fingerprint(z2));
}

TEST(Fingerprint, StructuralIgnoresNamesValuesAndDimsButNotOps) {
  Graph a = FusedGraph();
  Graph renamed = FusedGraph();
  renamed.inputs[0].name = "input";
  renamed.nodes[0].inputs[0] = "input";
  renamed.nodes[0].name = "conv_7";
  renamed.nodes[0].output = "t";
  renamed.nodes[1].inputs = {"t"};
  renamed.nodes[1].params["A"].data[0] = 3.0f;
  EXPECT_NE(Fingerprint(a), Fingerprint(renamed));
  EXPECT_EQ(StructuralFingerprint(a), StructuralFingerprint(renamed));

  Graph other_op = FusedGraph();
  other_op.nodes[0].epilogue[2].act = Op::Relu;
  EXPECT_NE(StructuralFingerprint(a), StructuralFingerprint(other_op));
  Graph other_attr = FusedGraph();
  other_attr.nodes[0].attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
  EXPECT_NE(StructuralFingerprint(a), StructuralFingerprint(other_attr));
  // Wiring counts: the residual from the other input.
  Graph rewired = FusedGraph();
  rewired.nodes[0].inputs = {"r", "x"};
  EXPECT_NE(StructuralFingerprint(a), StructuralFingerprint(rewired));
  // Same pattern at another size.
  Graph bigger = FusedGraph();
  bigger.inputs[0].shape = {1, 2, 8, 8};
  bigger.inputs[1].shape = {1, 2, 8, 8};
  EXPECT_EQ(StructuralFingerprint(a), StructuralFingerprint(bigger));
}

}  // namespace
}  // namespace fusefuzz
