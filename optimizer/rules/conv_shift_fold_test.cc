#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "conv-shift-fold";

Graph ConvConst(Rng& rng, Op op, Tensor c, bool const_is_b, int64_t m = 3, bool bias = true) {
  Node n = MakeNode(op, "op", {"c"}, "y");
  n.params[const_is_b ? "B" : "A"] = std::move(c);
  return MakeGraph({In("x", {1, 2, 5, 5})}, {MakeConv(rng, "conv", "x", "c", 2, m, 3, 1, bias), n},
                   {"y"});
}

TEST(ConvShiftFold, HandComputedSubPerChannel) {
  Node conv = MakeNode(Op::Conv, "conv", {"x"}, "c", {},
                       {{"W", Tensor({2, 1, 1, 1}, 1.0f)}, {"B", Tensor({2}, {1.0f, 2.0f})}});
  Node sub = MakeNode(Op::Sub, "op", {"c"}, "y", {}, {{"B", Tensor({1, 2, 1, 1}, {0.5f, 4.0f})}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {conv, sub}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, (std::vector<float>{0.5f, -2.0f}));
}

TEST(ConvShiftFold, ConvWithoutBiasGetsOne) {
  Node conv = MakeNode(Op::Conv, "conv", {"x"}, "c", {}, {{"W", Tensor({1, 1, 1, 1}, 1.0f)}});
  Node add = MakeNode(Op::Add, "op", {"c"}, "y", {}, {{"A", Tensor({1}, 3.0f)}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {conv, add}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, std::vector<float>{3.0f});
}

TEST(ConvShiftFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 19 + 4);
    const int64_t m = rng.Int(1, 4);
    const int kind = static_cast<int>(rng.Int(0, 2));
    Shape s = kind == 0 ? Shape{1} : kind == 1 ? Shape{1, m, 1, 1} : Shape{m, 1, 1};
    const bool sub = rng.Coin();
    Graph g = ConvConst(rng, sub ? Op::Sub : Op::Add, RandTensor(rng, s, -2, 2), sub || rng.Coin(),
                        m, rng.Coin());
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(ConvShiftFold, RefusesConstantMinusConv) {
  Rng rng(1);
  ExpectNoFire(ConvConst(rng, Op::Sub, Tensor({1}, 1.0f), /*const_is_b=*/false), kRule);
}

TEST(ConvShiftFold, RefusesVectorShapedConstant) {
  Rng rng(2);
  ExpectNoFire(ConvConst(rng, Op::Add, Tensor({3}, 1.0f), true), kRule);
}

TEST(ConvShiftFold, RefusesFullShapedConstant) {
  Rng rng(3);
  ExpectNoFire(ConvConst(rng, Op::Add, Tensor({1, 3, 3, 3}, 1.0f), true), kRule);
}

TEST(ConvShiftFold, RefusesWhenConvOutputHasAnotherConsumer) {
  Rng rng(4);
  Graph g = ConvConst(rng, Op::Add, Tensor({1}, 1.0f), true);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"c"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(ConvShiftFold, RefusesWhenConvOutputIsGraphOutput) {
  Rng rng(5);
  Graph g = ConvConst(rng, Op::Add, Tensor({1}, 1.0f), true);
  g.outputs.push_back("c");
  ExpectNoFire(g, kRule);
}

TEST(ConvShiftFold, RefusesFusedConvProducer) {
  Rng rng(6);
  Graph g = ConvConst(rng, Op::Add, Tensor({1}, 1.0f), true);
  g.nodes[0].op = Op::FusedConv;
  g.nodes[0].epilogue.push_back(EpilogueStep{});
  ExpectNoFire(g, kRule);
}

TEST(ConvShiftFold, RefusesShiftThatOverflowsFloat) {
  Rng rng(7);
  Graph g = ConvConst(rng, Op::Add, Tensor({1}, 3e38f), true);
  g.nodes[0].params["B"].data[0] = 3e38f;
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
