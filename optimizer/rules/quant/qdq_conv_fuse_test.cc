#include <gtest/gtest.h>

#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "qdq-conv-fuse";

TEST(QdqConvFuse, FusesTheChainIntoOneQLinearConvWithTheIntegers) {
  Rng rng(1);
  QConvSpec s;
  Graph g = QConvGraph(rng, s);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].op, Op::QuantizeLinear);
  const Node& f = r.graph.nodes[1];
  ASSERT_EQ(f.op, Op::QLinearConv);
  EXPECT_EQ(f.inputs, std::vector<std::string>{"xq"});
  EXPECT_EQ(f.output, "y");
  EXPECT_EQ(f.quant.at("x"), s.x);
  EXPECT_EQ(f.quant.at("y"), s.y);
  EXPECT_EQ(f.quant.at("w"), WeightGrid(s));
  EXPECT_TRUE(f.epilogue.empty());
  // W and B are the integers of their grids: value / scale.
  const Tensor& W = g.nodes[2].params.at("W");
  const int64_t per = W.size() / s.m;
  for (int64_t i = 0; i < W.size(); ++i) {
    const double q = double(W.data[size_t(i)]) / double(float(s.sw[size_t(i / per)]));
    EXPECT_EQ(f.params.at("W").data[size_t(i)], std::nearbyint(q)) << i;
  }
  for (int64_t m = 0; m < s.m; ++m) {
    const double sb = g.nodes[2].quant.at("B").scale[size_t(m)];
    EXPECT_EQ(f.params.at("B").data[size_t(m)],
              std::nearbyint(g.nodes[2].params.at("B").data[size_t(m)] / sb));
  }
}

TEST(QdqConvFuse, TheActivationBecomesTheEpilogueStep) {
  for (Op act : {Op::Relu, Op::Relu6, Op::Clip}) {
    Rng rng(2);
    QConvSpec s;
    s.act = act;
    OptimizeResult r = ExpectFiresOnce(QConvGraph(rng, s), kRule);
    ASSERT_EQ(r.graph.nodes.size(), 2u);
    const Node& f = r.graph.nodes[1];
    ASSERT_EQ(f.epilogue.size(), 1u);
    EXPECT_EQ(f.epilogue[0].act, act);
    if (act == Op::Clip) {
      EXPECT_EQ(AttrFloat(Op::Clip, f.epilogue[0].attrs, "min", ""), -1);
    }
  }
}

TEST(QdqConvFuse, PerTensorWeightsAndNoBiasInt8) {
  Rng rng(3);
  QConvSpec s;
  s.sw = {0.0078125};
  s.bias = false;
  s.x = I8(0.25, -128);
  s.y = I8(0.125, 5);
  OptimizeResult r = ExpectFiresOnce(QConvGraph(rng, s), kRule);
  EXPECT_EQ(CountOp(r.graph, Op::QLinearConv), 1);
  EXPECT_FALSE(r.graph.nodes[1].params.count("B"));
}

TEST(QdqConvFuse, KeepsADequantizeThatFansOut) {
  Rng rng(4);
  Graph g = QConvGraph(rng, QConvSpec{});
  g.nodes.push_back(MakeNode(Op::Relu, "other", {"xd"}, "o"));
  g.outputs.push_back("o");
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(CountOp(r.graph, Op::DequantizeLinear), 1);
  EXPECT_EQ(CountOp(r.graph, Op::QLinearConv), 1);
}

// One negative test per legality condition.
TEST(QdqConvFuse, RefusesABiasGridOffByAFactor) {
  Rng rng(5);
  QConvSpec s;
  s.bias_scale_factor = 2;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesABiasGridWithAZeroPoint) {
  Rng rng(6);
  QConvSpec s;
  s.bias_zero_point = 3;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAnUndeclaredBias) {
  Rng rng(7);
  QConvSpec s;
  s.declare_b = false;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAnUndeclaredWeight) {
  Rng rng(8);
  QConvSpec s;
  s.declare_w = false;
  s.declare_b = false;
  s.bias = false;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAWeightGridWithAZeroPoint) {
  Rng rng(9);
  QConvSpec s;
  s.weight_zero_point = 2;
  s.bias = false;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAUint8WeightGrid) {
  Rng rng(10);
  QConvSpec s;
  s.weight_type = QuantType::kUint8;
  s.bias = false;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAConvOutputWithAnotherConsumer) {
  Rng rng(11);
  Graph g = QConvGraph(rng, QConvSpec{});
  g.nodes.push_back(MakeNode(Op::Relu, "other", {"c"}, "o"));
  g.outputs.push_back("o");
  ExpectNoFire(g, kRule);
}

TEST(QdqConvFuse, RefusesAConvOutputThatIsAGraphOutput) {
  Rng rng(12);
  Graph g = QConvGraph(rng, QConvSpec{});
  g.outputs.push_back("c");
  ExpectNoFire(g, kRule);
}

TEST(QdqConvFuse, RefusesAnActivationOutputThatIsAGraphOutput) {
  Rng rng(13);
  QConvSpec s;
  s.act = Op::Relu;
  Graph g = QConvGraph(rng, s);
  g.outputs.push_back("a");
  ExpectNoFire(g, kRule);
}

// A graph input read by the DQ holds integers in every run that computes (both the reference
// and the engine check it first), so the chain fuses: what a minimized case starts from.
TEST(QdqConvFuse, FusesADequantizeOfAGraphInput) {
  Rng rng(14);
  Graph g = QConvGraph(rng, QConvSpec{});
  g.nodes.erase(g.nodes.begin());  // DQ reads "xq", now a graph input
  g.inputs = {In("xq", {1, 2, 5, 5})};
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(CountOp(r.graph, Op::QLinearConv), 1);
  EXPECT_EQ(r.graph.nodes[0].inputs, std::vector<std::string>{"xq"});
}

TEST(QdqConvFuse, RefusesAnInfiniteClipBound) {
  Rng rng(15);
  QConvSpec s;
  s.act = Op::Clip;
  s.clip_hi = INFINITY;
  ExpectNoFire(QConvGraph(rng, s), kRule);
}

TEST(QdqConvFuse, RefusesAPerAxisOutput) {
  Rng rng(16);
  Graph g = QConvGraph(rng, QConvSpec{});
  QuantParams y;
  y.type = QuantType::kUint8;
  y.scale = {0.1f, 0.1f, 0.2f};
  y.zero_point = {0, 0, 0};
  y.axis = 1;
  g.nodes.back().quant["y"] = y;
  ExpectNoFire(g, kRule);
}

TEST(QdqConvFuse, RefusesABatchNormBetween) {
  Rng rng(17);
  Graph g = QConvGraph(rng, QConvSpec{});
  g.nodes.insert(g.nodes.end() - 1, MakeBn(rng, "bn", "c", "b", 3));
  g.nodes.back().inputs = {"b"};
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
