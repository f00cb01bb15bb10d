#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "bn-conv-fold";

Graph BnConv(Rng& rng, int64_t c, int64_t m, int64_t group, bool bias, int64_t pad = 0,
             int64_t stride = 1) {
  return MakeGraph({In("x", {1, c, 6, 6})},
                   {MakeBn(rng, "bn", "x", "b", c),
                    MakeConv(rng, "conv", "b", "y", c, m, 3, group, bias, pad, stride)},
                   {"y"});
}

TEST(BnConvFold, FiresAndReadsTheBnInput) {
  Rng rng(1);
  Graph g = BnConv(rng, 2, 3, 1, true);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"bn", "conv"}));
}

TEST(BnConvFold, HandComputedValues) {
  // BN: s = 2 / sqrt(3 + 1) = 1, t = 1 - 2 * 1 = -1 ... with scale 2, var 3, eps 1, mean 2,
  // bias 1: s = 1, t = -1. Conv 1x2 kernel W = [3, 4], B = 0.5: W' = W, B' = 0.5 - 7 = -6.5.
  Node bn = MakeNode(Op::BatchNorm, "bn", {"x"}, "b", {{"epsilon", 1.0}},
                     {{"scale", Tensor({1}, 2.0f)},
                      {"bias", Tensor({1}, 1.0f)},
                      {"mean", Tensor({1}, 2.0f)},
                      {"var", Tensor({1}, 3.0f)}});
  Node conv = MakeNode(Op::Conv, "conv", {"b"}, "y", {},
                       {{"W", Tensor({1, 1, 1, 2}, {3.0f, 4.0f})}, {"B", Tensor({1}, 0.5f)}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {bn, conv}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.graph.nodes[0].params.at("W").data, (std::vector<float>{3.0f, 4.0f}));
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, std::vector<float>{-6.5f});
}

TEST(BnConvFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 11 + 5);
    const int64_t group = rng.Int(1, 3), cg = rng.Int(1, 2), mult = rng.Int(1, 2);
    Graph g = BnConv(rng, group * cg, group * mult, group, rng.Coin(), 0, rng.Int(1, 2));
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(BnConvFold, FoldsIntoFusedConv) {
  Rng rng(2);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes[1].op = Op::FusedConv;
  g.nodes[1].epilogue.push_back(EpilogueStep{});  // Relu after the conv part: unaffected
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "fused");
}

TEST(BnConvFold, RefusesPaddedConv) {
  Rng rng(3);
  ExpectNoFire(BnConv(rng, 2, 2, 1, true, /*pad=*/1), kRule);
}

TEST(BnConvFold, RefusesAsymmetricPadOnOneSide) {
  Rng rng(4);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes[1].attrs["pads"] = std::vector<int64_t>{0, 0, 0, 1};
  ExpectNoFire(g, kRule);
}

TEST(BnConvFold, RefusesWhenBnOutputHasAnotherConsumer) {
  Rng rng(5);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"b"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(BnConvFold, RefusesWhenBnOutputIsGraphOutput) {
  Rng rng(6);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.outputs.push_back("b");
  ExpectNoFire(g, kRule);
}

TEST(BnConvFold, RefusesZeroVariancePlusEpsilon) {
  Rng rng(7);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes[0].attrs["epsilon"] = 0.0;
  g.nodes[0].params["var"].data[0] = 0.0f;
  ExpectNoFire(g, kRule);
}

TEST(BnConvFold, RefusesWhenProducerIsNotBn) {
  Rng rng(8);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes[0] = MakeNode(Op::Relu, "bn", {"x"}, "b");
  ExpectNoFire(g, kRule);
}

TEST(BnConvFold, RefusesFoldThatOverflowsFloat) {
  Rng rng(9);
  Graph g = BnConv(rng, 2, 2, 1, true);
  g.nodes[0].params["scale"].data[0] = 3e38f;
  g.nodes[0].params["var"].data[0] = 1e-4f;
  g.nodes[1].params["W"].data[0] = 100.0f;
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
