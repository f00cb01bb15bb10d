#include <gtest/gtest.h>

#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "pad-qconv-fold";

// The fused QDQ chain with a Pad(value) of the integers in front: Q -> Pad -> QLinearConv.
Graph PadQConv(double value, int64_t zx = 128, std::string mode = "constant") {
  Rng rng(3);
  QConvSpec s;
  s.x = U8(0.05, zx);
  s.pad = 0;
  Graph g = QConvGraph(rng, s);
  OptimizeResult r = RunOnly(g, "qdq-conv-fuse");
  EXPECT_EQ(CountOp(r.graph, Op::QLinearConv), 1);
  Graph out = r.graph;
  Node pad =
      MakeNode(Op::Pad, "pad", {"xq"}, "xp",
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"mode", mode}, {"value", value}});
  out.nodes.insert(out.nodes.begin() + 1, pad);
  out.nodes[2].inputs = {"xp"};
  return out;
}

TEST(PadQConvFold, FoldsAPadOfTheZeroPoint) {
  OptimizeResult r = ExpectFiresOnce(PadQConv(128), kRule);
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(AttrInts(r.graph.nodes[1], "pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(r.graph.nodes[1].inputs, std::vector<std::string>{"xq"});
  ExpectFiresOnce(PadQConv(0, 0), kRule);
}

TEST(PadQConvFold, TheQdqChainWithAPadFusesThenFolds) {
  // Q -> Pad(z) -> DQ -> Conv -> Q: qdq-conv-fuse looks through the integer Pad, then the fold.
  Rng rng(4);
  QConvSpec s;
  s.pad = 0;
  Graph g = QConvGraph(rng, s);
  g.nodes.insert(g.nodes.begin() + 1,
                 MakeNode(Op::Pad, "pad", {"xq"}, "xp",
                          {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"value", 128.0}}));
  g.nodes[2].inputs = {"xp"};
  OptimizeResult r = Optimize(g);
  EXPECT_EQ(CountOp(r.graph, Op::Pad), 0);
  EXPECT_EQ(CountOp(r.graph, Op::QLinearConv), 1);
}

TEST(PadQConvFold, RefusesAValueOtherThanTheZeroPoint) {
  ExpectNoFire(PadQConv(127), kRule);
  ExpectNoFire(PadQConv(0), kRule);  // the integer 0 is not the real 0 when z_x = 128
}

TEST(PadQConvFold, RefusesReflectMode) { ExpectNoFire(PadQConv(128, 128, "reflect"), kRule); }

TEST(PadQConvFold, RefusesAPadOutputUsedElsewhere) {
  Graph g = PadQConv(128);
  g.outputs.push_back("xp");
  ExpectNoFire(g, kRule);
}

// A graph input read as integers holds them in every run (the reference and the engine check):
// the fold applies, as it does in a minimized case.
TEST(PadQConvFold, FoldsAPadOfAGraphInput) {
  Graph g = PadQConv(128);
  g.nodes.erase(g.nodes.begin());
  g.inputs = {In("xq", {1, 2, 5, 5})};
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(CountOp(r.graph, Op::Pad), 0);
}

}  // namespace
}  // namespace fusefuzz::testing
