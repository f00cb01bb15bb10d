#include <gtest/gtest.h>

#include "ir/error.h"
#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "qdq-pair-merge";

// x -> Q(a) -> DQ(b) -> Q(c) = "y".
Graph Pair(QuantParams a, QuantParams b, QuantParams c) {
  return MakeGraph({In("x", {1, 2, 4, 4})},
                   {QNode("q1", "x", "q", a), DQNode("dq", "q", "d", b), QNode("q2", "d", "y", c)},
                   {"y"});
}

TEST(QdqPairMerge, MergesARequantizeWithEqualParameters) {
  for (QuantParams p : {U8(0.05, 128), I8(0.3, -7), U8(0.0078125, 255)}) {
    const QuantParams first = p.type == QuantType::kInt8 ? I8(0.1, 3) : U8(0.1, 3);
    OptimizeResult r = ExpectFiresOnce(Pair(first, p, p), kRule);
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    EXPECT_EQ(r.graph.nodes[0].name, "q1");
    EXPECT_EQ(r.graph.nodes[0].output, "y");
    EXPECT_EQ(r.graph.nodes[0].quant.at("y"), first);
  }
}

TEST(QdqPairMerge, PerAxisParametersToo) {
  QuantParams p;
  p.type = QuantType::kInt8;
  p.scale = {0.5f, 0.25f};
  p.zero_point = {1, -3};
  p.axis = 1;
  ExpectFiresOnce(Pair(p, p, p), kRule);
}

TEST(QdqPairMerge, RefusesDifferentScales) {
  ExpectNoFire(Pair(U8(0.1, 3), U8(0.05, 128), U8(0.1, 128)), kRule);
}

TEST(QdqPairMerge, RefusesDifferentZeroPoints) {
  ExpectNoFire(Pair(U8(0.1, 3), U8(0.05, 128), U8(0.05, 127)), kRule);
}

TEST(QdqPairMerge, RefusesDifferentTypes) {
  ExpectNoFire(Pair(U8(0.1, 3), U8(0.05, 0), I8(0.05, 0)), kRule);
}

TEST(QdqPairMerge, RefusesAProducerOfAnotherType) {
  // The producer's integers reach beyond the DQ's type: Q would saturate them. Such a graph is
  // now refused by the verifier (issue 44: a DQ reading a value as another type than its
  // producer wrote), before any rule sees it; the optimizer verifies its input too, so the
  // rule's own type check stays as a second line only.
  const Graph g = Pair(U8(0.1, 3), I8(0.05, 0), I8(0.05, 0));
  EXPECT_THROW(VerifyGraph(g), InputError);
  EXPECT_THROW(RunOnly(g, kRule), InputError);
}

TEST(QdqPairMerge, RefusesADequantizeOfAGraphInput) {
  Graph g =
      MakeGraph({In("q", {1, 2, 4, 4})},
                {DQNode("dq", "q", "d", U8(0.05, 0)), QNode("q2", "d", "y", U8(0.05, 0))}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(QdqPairMerge, RefusesADequantizedValueThatFansOut) {
  Graph g = Pair(U8(0.1, 3), U8(0.05, 0), U8(0.05, 0));
  g.nodes.push_back(MakeNode(Op::Relu, "other", {"d"}, "o"));
  g.outputs.push_back("o");
  ExpectNoFire(g, kRule);
}

TEST(QdqPairMerge, RefusesADequantizedGraphOutput) {
  Graph g = Pair(U8(0.1, 3), U8(0.05, 0), U8(0.05, 0));
  g.outputs.push_back("d");
  ExpectNoFire(g, kRule);
}

TEST(QdqPairMerge, RefusesAQuantizedValueUsedElsewhere) {
  Graph g = Pair(U8(0.1, 3), U8(0.05, 0), U8(0.05, 0));
  g.outputs.push_back("q");
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
