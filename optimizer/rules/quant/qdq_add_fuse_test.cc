#include <gtest/gtest.h>

#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "qdq-add-fuse";

// a, b -> Q -> DQ -> Add [-> Relu] -> Q(y) = "y".
Graph AddQ(bool relu, QuantParams qa = U8(0.05, 128), QuantParams qb = I8(0.1, 3),
           QuantParams y = U8(0.08, 10), Shape sb = {1, 2, 4, 4}) {
  std::vector<Node> nodes = {QNode("qa", "a", "aq", qa), DQNode("dqa", "aq", "ad", qa),
                             QNode("qb", "b", "bq", qb), DQNode("dqb", "bq", "bd", qb),
                             MakeNode(Op::Add, "add", {"ad", "bd"}, "s")};
  std::string last = "s";
  if (relu) {
    nodes.push_back(MakeNode(Op::Relu, "relu", {"s"}, "r"));
    last = "r";
  }
  nodes.push_back(QNode("qy", last, "y", y));
  return MakeGraph({In("a", {1, 2, 4, 4}), In("b", sb)}, nodes, {"y"});
}

TEST(QdqAddFuse, FusesAddAndAddRelu) {
  for (bool relu : {false, true}) {
    OptimizeResult r = ExpectFiresOnce(AddQ(relu), kRule);
    ASSERT_EQ(CountOp(r.graph, Op::QLinearAdd), 1);
    const Node& f = r.graph.nodes.back();
    EXPECT_EQ(f.op, Op::QLinearAdd);
    EXPECT_EQ(f.inputs, (std::vector<std::string>{"aq", "bq"}));
    EXPECT_EQ(f.output, "y");
    EXPECT_EQ(AttrString(f, "activation"), relu ? "relu" : "none");
    EXPECT_EQ(f.quant.at("a"), U8(0.05, 128));
    EXPECT_EQ(f.quant.at("b"), I8(0.1, 3));
    EXPECT_EQ(f.quant.at("y"), U8(0.08, 10));  // requantized to the Q's grid
  }
}

TEST(QdqAddFuse, RefusesBroadcasting) {
  ExpectNoFire(AddQ(false, U8(0.05, 128), I8(0.1, 3), U8(0.08, 10), {1, 2, 1, 1}), kRule);
}

TEST(QdqAddFuse, RefusesAPerAxisOperand) {
  QuantParams p;
  p.type = QuantType::kUint8;
  p.scale = {0.5f, 0.25f};
  p.zero_point = {1, 3};
  p.axis = 1;
  ExpectNoFire(AddQ(false, p), kRule);
}

TEST(QdqAddFuse, RefusesAnAddOutputUsedElsewhere) {
  Graph g = AddQ(true);
  g.outputs.push_back("s");
  ExpectNoFire(g, kRule);
}

TEST(QdqAddFuse, RefusesAReluOutputUsedElsewhere) {
  Graph g = AddQ(true);
  g.outputs.push_back("r");
  ExpectNoFire(g, kRule);
}

TEST(QdqAddFuse, RefusesAnOperandThatIsNotDequantized) {
  Graph g = AddQ(false);
  g.nodes[4].inputs = {"ad", "b"};
  ExpectNoFire(g, kRule);
}

// A graph input read as integers holds them in every run (the reference and the engine check).
TEST(QdqAddFuse, FusesADequantizeOfAGraphInput) {
  Graph g = AddQ(false);
  g.nodes.erase(g.nodes.begin());
  g.inputs[0] = In("aq", {1, 2, 4, 4});
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(CountOp(r.graph, Op::QLinearAdd), 1);
}

TEST(QdqAddFuse, RefusesAConstantOperand) {
  Graph g = AddQ(false);
  g.nodes[4].inputs = {"ad"};
  g.nodes[4].params["B"] = Tensor({1});
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
