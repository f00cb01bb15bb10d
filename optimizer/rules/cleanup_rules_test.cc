// identity-elim and dead-node-elim.
#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

TEST(IdentityElim, UsesReadTheInput) {
  Graph g = MakeGraph(
      {In("x", {1, 2, 3, 3})},
      {MakeNode(Op::Identity, "id", {"x"}, "i"), MakeNode(Op::Relu, "r", {"i"}, "y")}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, "identity-elim");
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].inputs, std::vector<std::string>{"x"});
  Rng rng(1);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "identity");
}

TEST(IdentityElim, GraphOutputKeepsItsName) {
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})},
                      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "z"),
                       MakeNode(Op::Identity, "id", {"a"}, "y")},
                      {"y", "z"});
  OptimizeResult r = ExpectFiresOnce(g, "identity-elim");
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].output, "y");
  EXPECT_EQ(r.graph.nodes[1].inputs, std::vector<std::string>{"y"});
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"id", "r"}));
  Rng rng(2);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "renamed");
}

TEST(IdentityElim, RefusesGraphInputCopiedToGraphOutput) {
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})}, {MakeNode(Op::Identity, "id", {"x"}, "y")}, {"y"});
  ExpectNoFire(g, "identity-elim");
}

TEST(IdentityElim, RefusesGraphOutputCopiedToGraphOutput) {
  Graph g = MakeGraph(
      {In("x", {1, 2, 3, 3})},
      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Identity, "id", {"a"}, "y")}, {"a", "y"});
  ExpectNoFire(g, "identity-elim");
}

TEST(DeadNodeElim, RemovesUnusedChain) {
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})},
                      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "b"),
                       MakeNode(Op::Sigmoid, "s", {"x"}, "y")},
                      {"y"});
  OptimizeResult r = ExpectFiresOnce(g, "dead-node-elim");
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].name, "s");
  EXPECT_EQ(r.rewrites.size(), 2u);
  EXPECT_EQ(r.rewrites[0].nodes, std::vector<std::string>{"t"});  // "r" is used until t goes
}

TEST(DeadNodeElim, KeepsGraphOutputsAndUsedNodes) {
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})},
                      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "y")},
                      {"y", "a"});
  ExpectNoFire(g, "dead-node-elim");
}

}  // namespace
}  // namespace fusefuzz::testing
