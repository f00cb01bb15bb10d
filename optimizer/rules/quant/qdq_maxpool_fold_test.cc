#include <gtest/gtest.h>

#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "qdq-maxpool-fold";

// x -> Q(p) -> DQ(a) -> MaxPool -> Q(b) = "y".
// Kernel 2x2, stride 1, padded at the bottom and right: the output keeps the input's 4x4.
Graph Pool(QuantParams p, QuantParams a, QuantParams b) {
  Node pool = MakeNode(Op::MaxPool, "pool", {"d"}, "m",
                       {{"kernel_shape", std::vector<int64_t>{2, 2}},
                        {"strides", std::vector<int64_t>{1, 1}},
                        {"pads", std::vector<int64_t>{0, 0, 1, 1}}});
  return MakeGraph(
      {In("x", {1, 2, 4, 4})},
      {QNode("q1", "x", "q", p), DQNode("dq", "q", "d", a), pool, QNode("q2", "m", "y", b)}, {"y"});
}

TEST(QdqMaxPoolFold, PoolsTheIntegers) {
  OptimizeResult r = ExpectFiresOnce(Pool(U8(0.1, 3), U8(0.1, 3), U8(0.1, 3)), kRule);
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(r.graph.nodes[1].op, Op::MaxPool);
  EXPECT_EQ(r.graph.nodes[1].inputs, std::vector<std::string>{"q"});
  EXPECT_EQ(r.graph.nodes[1].output, "y");
}

TEST(QdqMaxPoolFold, PerChannelParametersToo) {
  QuantParams p;
  p.type = QuantType::kInt8;
  p.scale = {0.5f, 0.25f};
  p.zero_point = {1, -3};
  p.axis = 1;
  ExpectFiresOnce(Pool(p, p, p), kRule);
}

TEST(QdqMaxPoolFold, RefusesANegativeScale) {
  Graph g = Pool(U8(-0.1, 3), U8(-0.1, 3), U8(-0.1, 3));
  g.options.allow_negative_scale = true;
  ExpectNoFire(g, kRule);
}

TEST(QdqMaxPoolFold, RefusesPerAxisParametersAlongAPooledAxis) {
  QuantParams p;
  p.type = QuantType::kUint8;
  p.scale = {0.5f, 0.25f, 0.5f, 0.25f};
  p.zero_point = {1, 3, 1, 3};
  p.axis = 3;
  ExpectNoFire(Pool(p, p, p), kRule);
}

TEST(QdqMaxPoolFold, RefusesDifferentParameters) {
  ExpectNoFire(Pool(U8(0.1, 3), U8(0.1, 3), U8(0.2, 3)), kRule);
}

// A graph input read as integers holds them in every run (the reference and the engine check).
TEST(QdqMaxPoolFold, FoldsADequantizeOfAGraphInput) {
  Graph g = Pool(U8(0.1, 3), U8(0.1, 3), U8(0.1, 3));
  g.nodes.erase(g.nodes.begin());
  g.inputs = {In("q", {1, 2, 4, 4})};
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(CountOp(r.graph, Op::DequantizeLinear), 0);
}

TEST(QdqMaxPoolFold, RefusesADequantizedValueUsedElsewhere) {
  Graph g = Pool(U8(0.1, 3), U8(0.1, 3), U8(0.1, 3));
  g.outputs.push_back("d");
  ExpectNoFire(g, kRule);
}

TEST(QdqMaxPoolFold, RefusesAPooledValueUsedElsewhere) {
  Graph g = Pool(U8(0.1, 3), U8(0.1, 3), U8(0.1, 3));
  g.outputs.push_back("m");
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
