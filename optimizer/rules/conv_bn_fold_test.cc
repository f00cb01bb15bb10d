#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "conv-bn-fold";

Graph ConvBn(Rng& rng, int64_t c, int64_t m, int64_t group, bool bias, int64_t pad = 0) {
  return MakeGraph(
      {In("x", {1, c, 5, 5})},
      {MakeConv(rng, "conv", "x", "c", c, m, 3, group, bias, pad), MakeBn(rng, "bn", "c", "y", m)},
      {"y"});
}

TEST(ConvBnFold, FiresAndKeepsOutputName) {
  Rng rng(1);
  Graph g = ConvBn(rng, 3, 4, 1, true);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].op, Op::Conv);
  EXPECT_EQ(r.graph.nodes[0].output, "y");
  ASSERT_EQ(r.rewrites.size(), 1u);
  EXPECT_EQ(r.rewrites[0].index, 1);
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"conv", "bn"}));
}

TEST(ConvBnFold, HandComputedValues) {
  // 1x1 conv, one channel: W = 2, B = 1; BN scale 3, bias 0.5, mean 1, var 3, eps 1:
  // s = 3 / 2 = 1.5; W' = 3; B' = (1 - 1) * 1.5 + 0.5 = 0.5.
  Node conv = MakeNode(Op::Conv, "conv", {"x"}, "c", {},
                       {{"W", Tensor({1, 1, 1, 1}, 2.0f)}, {"B", Tensor({1}, 1.0f)}});
  Node bn = MakeNode(Op::BatchNorm, "bn", {"c"}, "y", {{"epsilon", 1.0}},
                     {{"scale", Tensor({1}, 3.0f)},
                      {"bias", Tensor({1}, 0.5f)},
                      {"mean", Tensor({1}, 1.0f)},
                      {"var", Tensor({1}, 3.0f)}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {conv, bn}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.graph.nodes[0].params.at("W").data, std::vector<float>{3.0f});
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, std::vector<float>{0.5f});
}

TEST(ConvBnFold, ConvWithoutBiasGetsOne) {
  Rng rng(2);
  Graph g = ConvBn(rng, 2, 2, 1, false);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_TRUE(r.graph.nodes[0].params.count("B"));
}

TEST(ConvBnFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 7 + 3);
    const int64_t group = rng.Int(1, 3), cg = rng.Int(1, 2), mult = rng.Int(1, 2);
    // Covers plain, grouped and depthwise-with-multiplier (cg == 1) convs.
    Graph g = ConvBn(rng, group * cg, group * mult, group, rng.Coin(), rng.Int(0, 1));
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(ConvBnFold, RefusesWhenProducerIsNotConv) {
  Rng rng(3);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeNode(Op::Relu, "r", {"x"}, "c"), MakeBn(rng, "bn", "c", "y", 2)}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesThroughActivation) {
  // Conv -> Relu -> BN is not foldable (the Glow bug).
  Rng rng(4);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 3),
                       MakeNode(Op::Relu, "r", {"c"}, "rc"), MakeBn(rng, "bn", "rc", "y", 2)},
                      {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesWhenConvOutputHasAnotherConsumer) {
  Rng rng(5);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 3), MakeBn(rng, "bn", "c", "y", 2),
                       MakeNode(Op::Relu, "r", {"c"}, "z")},
                      {"y", "z"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesWhenConvOutputIsGraphOutput) {
  Rng rng(6);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 3), MakeBn(rng, "bn", "c", "y", 2)},
                      {"y", "c"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesZeroVariancePlusEpsilon) {
  Rng rng(7);
  Node bn = MakeBn(rng, "bn", "c", "y", 2, 0.0);
  bn.params["var"].data[1] = 0.0f;
  Graph g =
      MakeGraph({In("x", {1, 2, 4, 4})}, {MakeConv(rng, "conv", "x", "c", 2, 2, 3), bn}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesFoldThatOverflowsFloat) {
  Rng rng(8);
  Node conv = MakeConv(rng, "conv", "x", "c", 2, 2, 1);
  conv.params["W"].data[0] = 1e30f;
  Node bn = MakeBn(rng, "bn", "c", "y", 2);
  bn.params["scale"].data[0] = 1e30f;
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})}, {conv, bn}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvBnFold, RefusesFusedConvProducer) {
  // The epilogue runs between conv and BN: folding into the weights would reorder it.
  Rng rng(9);
  Node conv = MakeConv(rng, "conv", "x", "c", 2, 2, 3);
  conv.op = Op::FusedConv;
  conv.epilogue.push_back(EpilogueStep{});  // Relu
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})}, {conv, MakeBn(rng, "bn", "c", "y", 2)}, {"y"});
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
