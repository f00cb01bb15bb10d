#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "conv-add-fuse";

// Residual block: x -> conv -> c; Add(c, x) (or Add(x, c) when swapped).
Graph Residual(Rng& rng, bool swapped, int64_t c = 2) {
  Node add = MakeNode(
      Op::Add, "add",
      swapped ? std::vector<std::string>{"x", "c"} : std::vector<std::string>{"c", "x"}, "y");
  return MakeGraph({In("x", {1, c, 5, 5})},
                   {MakeConv(rng, "conv", "x", "c", c, c, 3, 1, true, 1), add}, {"y"});
}

TEST(ConvAddFuse, FiresOnEitherSide) {
  for (bool swapped : {false, true}) {
    Rng rng(1);
    Graph g = Residual(rng, swapped);
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    const Node& f = r.graph.nodes[0];
    EXPECT_EQ(f.op, Op::FusedConv);
    EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "x"}));
    ASSERT_EQ(f.epilogue.size(), 1u);
    EXPECT_EQ(f.epilogue[0].kind, EpilogueKind::kAdd);
    EXPECT_EQ(f.epilogue[0].input, 1);
    EXPECT_EQ(r.rewrites[0].nodes, (std::vector<std::string>{"conv", "add"}));
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), swapped ? "B side" : "A side");
  }
}

TEST(ConvAddFuse, OtherOperandProducedAfterTheConv) {
  // The other operand is computed between the conv and the Add: the fused node must sit at the
  // Add's position to stay topologically ordered.
  Rng rng(2);
  Graph g =
      MakeGraph({In("x", {1, 2, 5, 5})},
                {MakeConv(rng, "conv", "x", "c", 2, 2, 3, 1, true, 1),
                 MakeNode(Op::Sigmoid, "s", {"x"}, "o"), MakeNode(Op::Add, "add", {"c", "o"}, "y")},
                {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(r.graph.nodes[1].op, Op::FusedConv);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "after");
}

TEST(ConvAddFuse, AppendsAfterExistingEpilogue) {
  // FusedConv(relu) -> Add: relu must still run before the add.
  Rng rng(3);
  Graph g = Residual(rng, false);
  g.nodes[0].op = Op::FusedConv;
  g.nodes[0].epilogue.push_back(EpilogueStep{});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes[0].epilogue.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].epilogue[0].kind, EpilogueKind::kActivation);
  EXPECT_EQ(r.graph.nodes[0].epilogue[1].kind, EpilogueKind::kAdd);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "epilogue order");
}

TEST(ConvAddFuse, ResidualThenReluKeepsDataFlowOrder) {
  // ResNet BasicBlock tail: conv -> bn -> add(x) -> relu. Default pipeline: relu after the add.
  Rng rng(4);
  Graph g = MakeGraph(
      {In("x", {1, 3, 5, 5})},
      {MakeConv(rng, "conv", "x", "c", 3, 3, 3, 1, false, 1), MakeBn(rng, "bn", "c", "b", 3),
       MakeNode(Op::Add, "add", {"b", "x"}, "s"), MakeNode(Op::Relu, "relu", {"s"}, "y")},
      {"y"});
  OptimizeResult r = Optimize(g);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  ASSERT_EQ(r.graph.nodes[0].epilogue.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].epilogue[0].kind, EpilogueKind::kAdd);
  EXPECT_EQ(r.graph.nodes[0].epilogue[1].kind, EpilogueKind::kActivation);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "basic block");
}

TEST(ConvAddFuse, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 29 + 3);
    const int64_t c = rng.Int(1, 3), m = rng.Int(1, 3);
    const int kind = static_cast<int>(rng.Int(0, 2));
    Shape other = kind == 0 ? Shape{1, m, 5, 5} : kind == 1 ? Shape{1, m, 1, 1} : Shape{5};
    const bool swapped = rng.Coin();
    Graph g = MakeGraph(
        {In("x", {1, c, 5, 5}), In("o", other)},
        {MakeConv(rng, "conv", "x", "k", c, m, 3, 1, rng.Coin(), 1),
         MakeNode(Op::Add, "add",
                  swapped ? std::vector<std::string>{"o", "k"} : std::vector<std::string>{"k", "o"},
                  "y")},
        {"y"});
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(ConvAddFuse, RefusesConstantOperand) {
  Rng rng(5);
  Graph g = Residual(rng, false);
  g.nodes[1].inputs = {"c"};
  g.nodes[1].params["B"] = Tensor({1}, 1.0f);
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesSameValueTwice) {
  Rng rng(6);
  Graph g = Residual(rng, false);
  g.nodes[1].inputs = {"c", "c"};
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesWhenConvOutputHasAnotherConsumer) {
  Rng rng(7);
  Graph g = Residual(rng, false);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"c"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesWhenConvOutputIsGraphOutput) {
  Rng rng(8);
  Graph g = Residual(rng, false);
  g.outputs.push_back("c");
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesFusedConvThatAlreadyAdds) {
  Rng rng(9);
  Graph g = Residual(rng, false);
  g.nodes[0].op = Op::FusedConv;
  g.nodes[0].inputs = {"x", "x"};
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  g.nodes[0].epilogue.push_back(add);
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesOperandThatWouldGrowTheOutput) {
  // Conv output [1,2,1,1] + other [1,2,3,3]: the Add broadcasts the conv, which a FusedConv
  // epilogue cannot express.
  Rng rng(10);
  Graph g = MakeGraph(
      {In("x", {1, 2, 3, 3}), In("o", {1, 2, 3, 3})},
      {MakeConv(rng, "conv", "x", "c", 2, 2, 3), MakeNode(Op::Add, "add", {"c", "o"}, "y")}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvAddFuse, RefusesNonConvProducers) {
  Rng rng(11);
  Graph g = MakeGraph(
      {In("x", {1, 2, 3, 3})},
      {MakeNode(Op::Relu, "r", {"x"}, "c"), MakeNode(Op::Add, "add", {"c", "x"}, "y")}, {"y"});
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
