// neighbourhood.dot (issue 43, item 4): a finding on a graph of more than kNeighbourhoodNodes
// nodes gets a picture of the blamed nodes and every node within kNeighbourhoodHops value edges
// of them, and nothing else; a small graph gets none (its whole picture is readable).
#include <gtest/gtest.h>

#include <string>

#include "report/finding_report.h"

namespace fusefuzz {
namespace {

// relu10 -> relu11 -> ... : node k reads node k-1's output; names of two digits, so that one
// name is never a prefix of another.
Repro ReluChain(int nodes, const std::string& blamed) {
  Repro r;
  r.graph.inputs = {{"x", {1, 4}}};
  std::string prev = "x";
  for (int k = 10; k < 10 + nodes; ++k) {
    Node n;
    n.name = "relu" + std::to_string(k);
    n.op = Op::Relu;
    n.inputs = {prev};
    n.output = n.name;
    r.graph.nodes.push_back(n);
    prev = n.output;
  }
  r.graph.outputs = {prev};
  r.inputs["x"] = Tensor({1, 4}, 0.5f);
  r.kind = FindingKind::kFusion;
  r.blame.rule = "some-rule";
  r.blame.nodes = {blamed};
  return r;
}

// Node k drawn as a node (a box; the value it reads from outside is an input ellipse).
bool Drawn(const std::string& dot, int k) {
  return dot.find("[shape=box, label=\"relu" + std::to_string(k) + "\\n") != std::string::npos;
}

TEST(NeighbourhoodDot, HoldsTheBlamedNodesAndThreeHopsOnly) {
  static_assert(kNeighbourhoodHops == 3);
  const FindingDots dots = MakeFindingDots(ReluChain(50, "relu35"));
  ASSERT_FALSE(dots.neighbourhood.empty());
  for (int k = 32; k <= 38; ++k) EXPECT_TRUE(Drawn(dots.neighbourhood, k)) << k;
  EXPECT_FALSE(Drawn(dots.neighbourhood, 31));
  // What the kept nodes read from outside: an input.
  EXPECT_NE(dots.neighbourhood.find("[shape=ellipse, label=\"relu31\\n"), std::string::npos);
  EXPECT_FALSE(Drawn(dots.neighbourhood, 39));
  EXPECT_NE(dots.neighbourhood.find("7 of 50 nodes"), std::string::npos) << dots.neighbourhood;
  EXPECT_NE(dots.neighbourhood.find("fillcolor=\"#ff6060\""), std::string::npos);  // relu35
  EXPECT_TRUE(Drawn(dots.before, 10));  // the whole graph is still drawn beside it
}

TEST(NeighbourhoodDot, NoneForAGraphSmallEnoughToDrawWhole) {
  EXPECT_TRUE(MakeFindingDots(ReluChain(int(kNeighbourhoodNodes), "relu20")).neighbourhood.empty());
}

}  // namespace
}  // namespace fusefuzz
