#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "bn-bn-merge";

Graph BnBn(Rng& rng, int64_t c) {
  return MakeGraph({In("x", {2, c, 3, 3})},
                   {MakeBn(rng, "bn1", "x", "a", c), MakeBn(rng, "bn2", "a", "y", c)}, {"y"});
}

TEST(BnBnMerge, FiresIntoOneBn) {
  Rng rng(1);
  OptimizeResult r = ExpectFiresOnce(BnBn(rng, 3), kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].op, Op::BatchNorm);
  EXPECT_EQ(r.graph.nodes[0].output, "y");
  EXPECT_EQ(r.graph.nodes[0].params.at("var").data, (std::vector<float>{1, 1, 1}));
}

TEST(BnBnMerge, ChainOfThreeMergesCompletely) {
  Rng rng(2);
  Graph g = BnBn(rng, 2);
  g.nodes[1].output = "b";
  g.nodes.push_back(MakeBn(rng, "bn3", "b", "y", 2));
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.rewrites.size(), 2u);
  EXPECT_EQ(r.graph.nodes.size(), 1u);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "chain");
}

TEST(BnBnMerge, ThenFoldsIntoConv) {
  // Conv -> BN -> BN (a reported bug: only one BN folded). The default pipeline folds both.
  Rng rng(3);
  Graph g = MakeGraph({In("x", {1, 2, 5, 5})},
                      {MakeConv(rng, "conv", "x", "c", 2, 3, 3), MakeBn(rng, "bn1", "c", "a", 3),
                       MakeBn(rng, "bn2", "a", "y", 3)},
                      {"y"});
  OptimizeResult r = Optimize(g);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].op, Op::Conv);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "conv-bn-bn");
}

TEST(BnBnMerge, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 13 + 1);
    Graph g = BnBn(rng, rng.Int(1, 4));
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(BnBnMerge, RefusesWhenFirstOutputHasAnotherConsumer) {
  Rng rng(4);
  Graph g = BnBn(rng, 2);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"a"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(BnBnMerge, RefusesWhenFirstOutputIsGraphOutput) {
  Rng rng(5);
  Graph g = BnBn(rng, 2);
  g.outputs.push_back("a");
  ExpectNoFire(g, kRule);
}

TEST(BnBnMerge, RefusesZeroVariancePlusEpsilon) {
  Rng rng(6);
  Graph g = BnBn(rng, 2);
  g.nodes[1].attrs["epsilon"] = 0.0;
  g.nodes[1].params["var"].data[1] = 0.0f;
  ExpectNoFire(g, kRule);
}

TEST(BnBnMerge, RefusesWhenProducerIsNotBn) {
  Rng rng(7);
  Graph g = BnBn(rng, 2);
  g.nodes[0] = MakeNode(Op::Tanh, "bn1", {"x"}, "a");
  ExpectNoFire(g, kRule);
}

TEST(BnBnMerge, RefusesMergeThatOverflowsFloat) {
  Rng rng(8);
  Graph g = BnBn(rng, 2);
  g.nodes[0].params["scale"].data[0] = 1e30f;
  g.nodes[1].params["scale"].data[0] = 1e30f;
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
