// Faults that corrupt conv-bn-fold: bias-not-scaled, eps-dropped, groups-layout, multi-consumer.
// Each: visible where its condition holds, invisible (or not firing) where it does not.
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"

namespace fusefuzz::testing {
namespace {

Graph ConvBn(Rng& rng, int64_t c, int64_t m, int64_t group, bool bias, Node bn) {
  return MakeGraph({In("x", {1, c, 6, 6})},
                   {MakeConv(rng, "conv", "x", "c", c, m, 3, group, bias, 1), std::move(bn)},
                   {"y"});
}

TEST(BiasNotScaled, VisibleWithConvBias) {
  Rng rng(11);
  Graph g = ConvBn(rng, 3, 4, 1, true, MakeBn(rng, "bn", "c", "y", 4));
  ExpectFaultVisible(g, RandInputs(rng, g), "bias-not-scaled");
}

TEST(BiasNotScaled, InvisibleWithoutConvBias) {
  Rng rng(12);
  Graph g = ConvBn(rng, 3, 4, 1, false, MakeBn(rng, "bn", "c", "y", 4));
  ExpectFaultInvisible(g, RandInputs(rng, g), "bias-not-scaled", true);
}

TEST(BiasNotScaled, HandComputedBias) {
  // W = 2, B = 1; BN scale 3, bias 0.5, mean 1, var 3, eps 1: s = 1.5, t = 0.5 - 1.5 = -1.
  // Right: B' = 1 * 1.5 - 1 = 0.5. The fault: B' = 1 + (-1) = 0.
  Node conv = MakeNode(Op::Conv, "conv", {"x"}, "c", {},
                       {{"W", Tensor({1, 1, 1, 1}, 2.0f)}, {"B", Tensor({1}, 1.0f)}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})},
                      {conv, MakeBnWith("bn", "c", "y", {3}, {0.5f}, {1}, {3}, 1.0)}, {"y"});
  OptimizeOptions o;
  o.inject = {"bias-not-scaled"};
  o.only = {"bias-not-scaled"};
  OptimizeResult r = Optimize(g, o);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].params.at("W").data, std::vector<float>{3.0f});
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, std::vector<float>{0.0f});
  ASSERT_EQ(r.rewrites.size(), 1u);
  EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"conv", "bn"}));
}

TEST(EpsDropped, VisibleWhenVarIsComparableToEps) {
  Rng rng(21);
  Node bn = MakeBnWith("bn", "c", "y", {1.5f, -0.7f, 1, 2}, {0.1f, 0.2f, -0.3f, 0},
                       {0.5f, -0.2f, 0, 1}, {1e-5f, 2e-5f, 5e-6f, 1e-5f}, 1e-5);
  Graph g = ConvBn(rng, 3, 4, 1, true, bn);
  ExpectFaultVisible(g, RandInputs(rng, g), "eps-dropped");
}

TEST(EpsDropped, InvisibleWhenVarIsLargeAgainstEps) {
  Rng rng(22);
  Node bn = MakeBnWith("bn", "c", "y", {1.5f, -0.7f, 1, 2}, {0.1f, 0.2f, -0.3f, 0},
                       {0.5f, -0.2f, 0, 1}, {0.5f, 1, 2, 1.5f}, 1e-5);
  Graph g = ConvBn(rng, 3, 4, 1, true, bn);
  ExpectFaultInvisible(g, RandInputs(rng, g), "eps-dropped", true);
}

TEST(EpsDropped, RefusesZeroVariance) {
  Rng rng(23);
  Node bn = MakeBnWith("bn", "c", "y", {1, 1}, {0, 0}, {0, 0}, {1, 0}, 1e-3);
  Graph g = ConvBn(rng, 2, 2, 1, true, bn);
  // Not fired: dividing by sqrt(0) would leave no valid graph; conv-bn-fold folds it instead.
  ExpectFaultInvisible(g, RandInputs(rng, g), "eps-dropped", false);
}

TEST(GroupsLayout, VisibleOnDepthwiseConv) {
  Rng rng(31);
  Graph g = ConvBn(rng, 4, 4, 4, true, MakeBn(rng, "bn", "c", "y", 4));
  ExpectFaultVisible(g, RandInputs(rng, g), "groups-layout");
}

TEST(GroupsLayout, VisibleOnGroupedConvWithMultiplier) {
  Rng rng(32);
  Graph g = ConvBn(rng, 4, 8, 2, false, MakeBn(rng, "bn", "c", "y", 8));
  ExpectFaultVisible(g, RandInputs(rng, g), "groups-layout");
}

TEST(GroupsLayout, InvisibleOnOrdinaryConv) {
  Rng rng(33);
  Graph g = ConvBn(rng, 3, 4, 1, true, MakeBn(rng, "bn", "c", "y", 4));
  ExpectFaultInvisible(g, RandInputs(rng, g), "groups-layout", true);
}

TEST(GroupsLayout, InvisibleWithUniformScale) {
  Rng rng(34);
  // Same s in every channel (scale and var alike); shifts differ, and are folded right.
  Node bn = MakeBnWith("bn", "c", "y", {1.7f, 1.7f, 1.7f, 1.7f}, {0.1f, -0.2f, 0.3f, 0},
                       {0.5f, -0.5f, 0.25f, 1}, {0.8f, 0.8f, 0.8f, 0.8f});
  Graph g = ConvBn(rng, 4, 4, 4, true, bn);
  ExpectFaultInvisible(g, RandInputs(rng, g), "groups-layout", true);
}

// conv -> c; c -> bn -> y1 and c -> relu -> y2.
Graph SharedConv(Rng& rng) {
  return MakeGraph({In("x", {1, 3, 6, 6})},
                   {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1),
                    MakeBn(rng, "bn", "c", "y1", 4), MakeNode(Op::Relu, "relu", {"c"}, "y2")},
                   {"y1", "y2"});
}

TEST(MultiConsumer, VisibleInTheOtherConsumer) {
  Rng rng(41);
  Graph g = SharedConv(rng);
  ExpectFaultVisible(g, RandInputs(rng, g), "multi-consumer");
  // Only y2 is wrong: the BN branch itself is folded correctly.
  OptimizeResult bad = Inject(g, "multi-consumer");
  TensorMap in = RandInputs(rng, g);
  RefTensorMap want = RunReference(g, in), got = RunReference(bad.graph, in);
  double d1 = 0, d2 = 0;
  for (size_t i = 0; i < want.at("y1").value.size(); ++i) {
    d1 = std::max(d1, std::fabs(want.at("y1").value[i] - got.at("y1").value[i]));
    d2 = std::max(d2, std::fabs(want.at("y2").value[i] - got.at("y2").value[i]));
  }
  EXPECT_LT(d1, 1e-4);
  EXPECT_GT(d2, 1e-2);
}

TEST(MultiConsumer, VisibleWhenConvOutputIsAGraphOutput) {
  Rng rng(42);
  Graph g = MakeGraph(
      {In("x", {1, 3, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1), MakeBn(rng, "bn", "c", "y", 4)},
      {"c", "y"});
  ExpectFaultVisible(g, RandInputs(rng, g), "multi-consumer");
}

TEST(MultiConsumer, DoesNotFireOnASingleConsumer) {
  Rng rng(43);
  Graph g = ConvBn(rng, 3, 4, 1, true, MakeBn(rng, "bn", "c", "y", 4));
  ExpectFaultInvisible(g, RandInputs(rng, g), "multi-consumer", false);
  OptimizeResult clean = Optimize(g);
  ASSERT_FALSE(clean.rewrites.empty());
  EXPECT_EQ(clean.rewrites[0].rule, "conv-bn-fold");
}

}  // namespace
}  // namespace fusefuzz::testing
