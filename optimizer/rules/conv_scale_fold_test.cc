#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "conv-scale-fold";

// Conv (m channels) -> op with constant `c` on side A or B.
Graph ConvConst(Rng& rng, Op op, Tensor c, bool const_is_b, int64_t m = 3, bool bias = true) {
  Node n = MakeNode(op, "op", {"c"}, "y");
  n.params[const_is_b ? "B" : "A"] = std::move(c);
  return MakeGraph({In("x", {1, 2, 5, 5})}, {MakeConv(rng, "conv", "x", "c", 2, m, 3, 1, bias), n},
                   {"y"});
}

TEST(ConvScaleFold, HandComputedMulScalar) {
  Node conv = MakeNode(Op::Conv, "conv", {"x"}, "c", {},
                       {{"W", Tensor({1, 1, 1, 1}, 2.0f)}, {"B", Tensor({1}, 1.0f)}});
  Node mul = MakeNode(Op::Mul, "op", {"c"}, "y", {}, {{"A", Tensor({1}, -3.0f)}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {conv, mul}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(r.graph.nodes[0].params.at("W").data, std::vector<float>{-6.0f});
  EXPECT_EQ(r.graph.nodes[0].params.at("B").data, std::vector<float>{-3.0f});
  EXPECT_EQ(r.graph.nodes[0].output, "y");
}

TEST(ConvScaleFold, HandComputedDivPerChannel) {
  Node conv =
      MakeNode(Op::Conv, "conv", {"x"}, "c", {}, {{"W", Tensor({2, 1, 1, 1}, {2.0f, 3.0f})}});
  Node div = MakeNode(Op::Div, "op", {"c"}, "y", {}, {{"B", Tensor({1, 2, 1, 1}, {4.0f, -2.0f})}});
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {conv, div}, {"y"});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.graph.nodes[0].params.at("W").data, (std::vector<float>{0.5f, -1.5f}));
  EXPECT_FALSE(r.graph.nodes[0].params.count("B"));  // no bias stays no bias
}

TEST(ConvScaleFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 17 + 2);
    const int64_t m = rng.Int(1, 4);
    const int shape_kind = static_cast<int>(rng.Int(0, 3));
    Shape s = shape_kind == 0   ? Shape{1}
              : shape_kind == 1 ? Shape{1, m, 1, 1}
              : shape_kind == 2 ? Shape{m, 1, 1}
                                : Shape{1, 1, 1, 1};
    const bool div = rng.Coin();
    Tensor c = RandTensor(rng, s, 0.25, 2);
    if (rng.Coin()) {
      for (auto& v : c.data) v = -v;
    }
    Graph g = ConvConst(rng, div ? Op::Div : Op::Mul, c, div || rng.Coin(), m, rng.Coin());
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(ConvScaleFold, RefusesVectorShapedConstant) {
  // [M] broadcasts along W under ONNX rules, not along channels.
  Rng rng(1);
  ExpectNoFire(ConvConst(rng, Op::Mul, Tensor({3}, 2.0f), true), kRule);
}

TEST(ConvScaleFold, RefusesFullShapedConstant) {
  Rng rng(2);
  ExpectNoFire(ConvConst(rng, Op::Mul, Tensor({1, 3, 3, 3}, 2.0f), true), kRule);
}

TEST(ConvScaleFold, RefusesConstantDividend) {
  Rng rng(3);
  ExpectNoFire(ConvConst(rng, Op::Div, Tensor({1}, 2.0f), /*const_is_b=*/false), kRule);
}

TEST(ConvScaleFold, RefusesDivisionByZero) {
  Rng rng(4);
  ExpectNoFire(ConvConst(rng, Op::Div, Tensor({1, 3, 1, 1}, {1.0f, 0.0f, 2.0f}), true), kRule);
}

TEST(ConvScaleFold, RefusesWhenConvOutputHasAnotherConsumer) {
  Rng rng(5);
  Graph g = ConvConst(rng, Op::Mul, Tensor({1}, 2.0f), true);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"c"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(ConvScaleFold, RefusesWhenConvOutputIsGraphOutput) {
  Rng rng(6);
  Graph g = ConvConst(rng, Op::Mul, Tensor({1}, 2.0f), true);
  g.outputs.push_back("c");
  ExpectNoFire(g, kRule);
}

TEST(ConvScaleFold, RefusesTwoValueOperands) {
  Rng rng(7);
  Graph g = MakeGraph(
      {In("x", {1, 2, 5, 5}), In("s", {1, 3, 1, 1})},
      {MakeConv(rng, "conv", "x", "c", 2, 3, 3), MakeNode(Op::Mul, "op", {"c", "s"}, "y")}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(ConvScaleFold, RefusesNonConvProducer) {
  Rng rng(8);
  Graph g = ConvConst(rng, Op::Mul, Tensor({1}, 2.0f), true);
  g.nodes[0] = MakeNode(Op::Relu, "conv", {"x"}, "c");
  g.inputs[0].shape = {1, 3, 3, 3};
  ExpectNoFire(g, kRule);
}

TEST(ConvScaleFold, RefusesScaleThatOverflowsFloat) {
  Rng rng(9);
  Graph g = ConvConst(rng, Op::Div, Tensor({1}, 1e-30f), true);
  g.nodes[0].params["W"].data[0] = 1e30f;
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
