#include <gtest/gtest.h>

#include "optimizer/rules/activation_cases.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "conv-activation-fuse";

TEST(ConvActivationFuse, EveryActivationBecomesAnEpilogueStep) {
  Rng rng(1);
  for (const Node& act : AllActivations(rng, "c", "y", 3)) {
    Graph g =
        MakeGraph({In("x", {1, 2, 5, 5})}, {MakeConv(rng, "conv", "x", "c", 2, 3, 3), act}, {"y"});
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    const Node& f = r.graph.nodes[0];
    EXPECT_EQ(f.op, Op::FusedConv);
    EXPECT_EQ(f.output, "y");
    ASSERT_EQ(f.epilogue.size(), 1u);
    EXPECT_EQ(f.epilogue[0].kind, EpilogueKind::kActivation);
    EXPECT_EQ(f.epilogue[0].act, act.op);
    EXPECT_EQ(f.epilogue[0].attrs, act.attrs);
    EXPECT_EQ(f.epilogue[0].params, act.params);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), std::string(OpName(act.op)));
  }
}

TEST(ConvActivationFuse, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 23 + 7);
    const int64_t group = rng.Int(1, 2), m = group * rng.Int(1, 2);
    std::vector<Node> acts = AllActivations(rng, "c", "y", m);
    Node act = acts[static_cast<size_t>(rng.Int(0, int64_t(acts.size()) - 1))];
    Graph g = MakeGraph(
        {In("x", {1, group * 2, 5, 5})},
        {MakeConv(rng, "conv", "x", "c", group * 2, m, 3, group, rng.Coin(), rng.Int(0, 1)), act},
        {"y"});
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

// The conv output is [1, 3, 3, 3]: C == W == 3. A [3] slope broadcasts along W (ONNX), so
// fusing it as a per-channel epilogue step would silently change the numerics (issue 13).
TEST(ConvActivationFuse, RefusesPReluSlopeAlongW) {
  for (const Shape& s : std::vector<Shape>{{3}, {3, 3}, {3, 3, 3}, {1, 1, 3, 1}}) {
    Rng rng(4);
    Graph g = MakeGraph(
        {In("x", {1, 2, 5, 5})},
        {MakeConv(rng, "conv", "x", "c", 2, 3, 3),
         MakeNode(Op::PRelu, "p", {"c"}, "y", {}, {{"slope", RandTensor(rng, s, -1, 1)}})},
        {"y"});
    ExpectNoFire(g, kRule);
  }
}

// Slopes that vary along the channel only (or not at all) fuse, stored as [M, 1, 1] or [1].
TEST(ConvActivationFuse, PerChannelSlopesFuseInTheirEpilogueShape) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1, 1}, {3, 1, 1}}, {{1, 3, 1, 1}, {3, 1, 1}}, {{1}, {1}}, {{1, 1, 1}, {1}}};
  for (const auto& [given, stored] : cases) {
    Rng rng(5);
    Graph g = MakeGraph(
        {In("x", {1, 2, 5, 5})},
        {MakeConv(rng, "conv", "x", "c", 2, 3, 3),
         MakeNode(Op::PRelu, "p", {"c"}, "y", {}, {{"slope", RandTensor(rng, given, -1, 1)}})},
        {"y"});
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    EXPECT_EQ(r.graph.nodes[0].epilogue.at(0).params.at("slope").shape, stored);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), ShapeToString(given));
  }
}

TEST(ConvActivationFuse, ChainAppendsInOrder) {
  // Conv -> Relu6 -> Tanh: two steps, in data-flow order.
  Rng rng(2);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 3),
                       MakeNode(Op::Relu6, "a", {"c"}, "r"), MakeNode(Op::Tanh, "b", {"r"}, "y")},
                      {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  ASSERT_EQ(r.graph.nodes[0].epilogue.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].epilogue[0].act, Op::Relu6);
  EXPECT_EQ(r.graph.nodes[0].epilogue[1].act, Op::Tanh);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "chain");
}

TEST(ConvActivationFuse, RefusesWhenConvOutputHasAnotherConsumer) {
  Rng rng(3);
  Graph g =
      MakeGraph({In("x", {1, 2, 4, 4})},
                {MakeConv(rng, "conv", "x", "c", 2, 2, 3), MakeNode(Op::Relu, "a", {"c"}, "y"),
                 MakeNode(Op::Add, "add", {"c", "y"}, "z")},
                {"z"});
  ExpectNoFire(g, kRule);
}

TEST(ConvActivationFuse, RefusesWhenConvOutputIsGraphOutput) {
  Rng rng(4);
  Graph g = MakeGraph(
      {In("x", {1, 2, 4, 4})},
      {MakeConv(rng, "conv", "x", "c", 2, 2, 3), MakeNode(Op::Relu, "a", {"c"}, "y")}, {"y", "c"});
  ExpectNoFire(g, kRule);
}

TEST(ConvActivationFuse, RefusesNonConvProducer) {
  Rng rng(5);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeBn(rng, "bn", "x", "c", 2), MakeNode(Op::Relu, "a", {"c"}, "y")}, {"y"});
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
