// Faults about the order of a conv's epilogue: through-activation, declaration-order,
// activation-before-add, relu6-unbounded.
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"

namespace fusefuzz::testing {
namespace {

// x -> conv -> relu -> bn -> y
Graph ConvReluBn(Rng& rng, Node bn) {
  return MakeGraph({In("x", {1, 3, 6, 6})},
                   {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1),
                    MakeNode(Op::Relu, "relu", {"c"}, "r"), std::move(bn)},
                   {"y"});
}

TEST(ThroughActivation, VisibleWithBnShift) {
  Rng rng(51);
  Graph g = ConvReluBn(rng, MakeBn(rng, "bn", "r", "y", 4));
  ExpectFaultVisible(g, RandInputs(rng, g), "through-activation");
  OptimizeResult bad = Inject(g, "through-activation");
  ASSERT_FALSE(bad.rewrites.empty());
  EXPECT_EQ(bad.rewrites[0].nodes, (std::vector<std::string>{"conv", "relu", "bn"}));
  EXPECT_EQ(CountOp(bad.graph, Op::BatchNorm), 0);
}

TEST(ThroughActivation, InvisibleForPositiveScaleWithoutShift) {
  Rng rng(52);
  // t = bias - mean * s = 0 and s > 0: relu(s * c) == s * relu(c).
  Node bn =
      MakeBnWith("bn", "r", "y", {0.5f, 1, 2, 3}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0.5f, 2, 0.25f});
  Graph g = ConvReluBn(rng, bn);
  ExpectFaultInvisible(g, RandInputs(rng, g), "through-activation", true);
}

TEST(ThroughActivation, VisibleForNegativeScaleWithoutShift) {
  Rng rng(53);
  Node bn = MakeBnWith("bn", "r", "y", {-0.5f, 1, -2, 3}, {0, 0, 0, 0}, {0, 0, 0, 0},
                       {1, 0.5f, 2, 0.25f});
  Graph g = ConvReluBn(rng, bn);
  ExpectFaultVisible(g, RandInputs(rng, g), "through-activation");
}

// The tail of a ResNet BasicBlock: x -> conv -> bn -> add(., x) -> relu -> y.
Graph BasicBlockTail(Node conv, Node bn) {
  return MakeGraph({In("x", {1, 4, 6, 6})},
                   {std::move(conv), std::move(bn), MakeNode(Op::Add, "add", {"b", "x"}, "s"),
                    MakeNode(Op::Relu, "relu", {"s"}, "y")},
                   {"y"});
}

TEST(DeclarationOrder, VisibleOnBasicBlock) {
  Rng rng(61);
  Graph g = BasicBlockTail(MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, false, 1),
                           MakeBn(rng, "bn", "c", "b", 4));
  ExpectFaultVisible(g, RandInputs(rng, g), "declaration-order");
  OptimizeResult bad = Inject(g, "declaration-order");
  ASSERT_EQ(bad.graph.nodes.size(), 1u);
  const Node& f = bad.graph.nodes[0];
  EXPECT_EQ(f.op, Op::FusedConv);
  ASSERT_EQ(f.epilogue.size(), 3u);
  EXPECT_EQ(f.epilogue[0].kind, EpilogueKind::kScaleShift);
  EXPECT_EQ(f.epilogue[1].kind, EpilogueKind::kActivation);
  EXPECT_EQ(f.epilogue[2].kind, EpilogueKind::kAdd);
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "x"}));
}

TEST(DeclarationOrder, InvisibleWhenBranchAndResidualAreNonNegative) {
  Rng rng(62);
  // W >= 0, x >= 0, s > 0, t >= 0: bn(conv(x)) >= 0 and x >= 0, so relu(a) + x == relu(a + x).
  Node conv = MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, false, 1);
  for (auto& v : conv.params["W"].data) v = std::fabs(v);
  Node bn =
      MakeBnWith("bn", "c", "b", {1, 2, 0.5f, 1}, {0.5f, 0, 1, 0.25f}, {0, 0, 0, 0}, {1, 1, 1, 1});
  Graph g = BasicBlockTail(conv, bn);
  ExpectFaultInvisible(g, RandInputs(rng, g, 0, 2), "declaration-order", true);
}

TEST(DeclarationOrder, DoesNotFireWhenReluPrecedesTheAdd) {
  Rng rng(63);
  Graph g = MakeGraph(
      {In("x", {1, 4, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, false, 1), MakeBn(rng, "bn", "c", "b", 4),
       MakeNode(Op::Relu, "relu", {"b"}, "r"), MakeNode(Op::Add, "add", {"r", "x"}, "y")},
      {"y"});
  ExpectFaultInvisible(g, RandInputs(rng, g), "declaration-order", false);
}

// x -> conv -> act -> add(., x) -> y
Graph ConvActAdd(Rng& rng, Op act) {
  return MakeGraph({In("x", {1, 4, 6, 6})},
                   {MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, true, 1),
                    MakeNode(act, "act", {"c"}, "a"), MakeNode(Op::Add, "add", {"x", "a"}, "y")},
                   {"y"});
}

TEST(ActivationBeforeAdd, VisibleOnConvReluAdd) {
  Rng rng(71);
  Graph g = ConvActAdd(rng, Op::Relu);
  ExpectFaultVisible(g, RandInputs(rng, g), "activation-before-add");
  OptimizeResult bad = Inject(g, "activation-before-add");
  ASSERT_EQ(bad.graph.nodes.size(), 1u);
  const auto& ep = bad.graph.nodes[0].epilogue;
  ASSERT_EQ(ep.size(), 2u);
  EXPECT_EQ(ep[0].kind, EpilogueKind::kAdd);
  EXPECT_EQ(ep[1].kind, EpilogueKind::kActivation);
}

TEST(ActivationBeforeAdd, VisibleOnConvSigmoidAdd) {
  Rng rng(72);
  Graph g = ConvActAdd(rng, Op::Sigmoid);
  ExpectFaultVisible(g, RandInputs(rng, g), "activation-before-add");
}

TEST(ActivationBeforeAdd, VisibleOnFusedConvWithActivation) {
  Rng rng(73);
  Node conv = MakeConv(rng, "conv", "x", "a", 4, 4, 3, 1, true, 1);
  conv.op = Op::FusedConv;
  EpilogueStep relu;
  relu.kind = EpilogueKind::kActivation;
  relu.act = Op::Relu;
  conv.epilogue.push_back(relu);
  Graph g =
      MakeGraph({In("x", {1, 4, 6, 6})}, {conv, MakeNode(Op::Add, "add", {"a", "x"}, "y")}, {"y"});
  ExpectFaultVisible(g, RandInputs(rng, g), "activation-before-add");
}

TEST(ActivationBeforeAdd, DoesNotFireWhenTheAddComesFirst) {
  Rng rng(74);
  Graph g =
      MakeGraph({In("x", {1, 4, 6, 6})},
                {MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, true, 1),
                 MakeNode(Op::Add, "add", {"c", "x"}, "s"), MakeNode(Op::Relu, "relu", {"s"}, "y")},
                {"y"});
  ExpectFaultInvisible(g, RandInputs(rng, g), "activation-before-add", false);
}

// x -> conv -> act -> y, with the conv's weights scaled by `w_scale`.
Graph ConvAct(Rng& rng, Node act, double w_lo, double w_hi) {
  Node conv = MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1);
  conv.params["W"] = RandTensor(rng, {4, 3, 3, 3}, w_lo, w_hi);
  return MakeGraph({In("x", {1, 3, 6, 6})}, {conv, std::move(act)}, {"y"});
}

TEST(Relu6Unbounded, VisibleAboveSix) {
  Rng rng(81);
  Graph g = ConvAct(rng, MakeNode(Op::Relu6, "act", {"c"}, "y"), 0, 1);
  ExpectFaultVisible(g, RandInputs(rng, g, 0, 2), "relu6-unbounded");
}

TEST(Relu6Unbounded, VisibleOnClipAboveMax) {
  Rng rng(82);
  Graph g =
      ConvAct(rng, MakeNode(Op::Clip, "act", {"c"}, "y", {{"min", -1.0}, {"max", 1.0}}), -1, 1);
  ExpectFaultVisible(g, RandInputs(rng, g), "relu6-unbounded");
}

TEST(Relu6Unbounded, InvisibleBelowSix) {
  Rng rng(83);
  // |conv| <= 27 * 0.05 * 2 + |B| <= 3.7 < 6.
  Graph g = ConvAct(rng, MakeNode(Op::Relu6, "act", {"c"}, "y"), -0.05, 0.05);
  ExpectFaultInvisible(g, RandInputs(rng, g), "relu6-unbounded", true);
}

}  // namespace
}  // namespace fusefuzz::testing
