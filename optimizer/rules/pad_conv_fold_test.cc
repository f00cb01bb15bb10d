#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "pad-conv-fold";

Node MakePad(std::vector<int64_t> pads, std::string mode = "constant", double value = 0.0) {
  return MakeNode(Op::Pad, "pad", {"x"}, "p",
                  {{"pads", std::move(pads)}, {"mode", std::move(mode)}, {"value", value}});
}

Graph PadConv(Rng& rng, Node pad, int64_t conv_pad = 0, int64_t c = 2, int64_t group = 1) {
  return MakeGraph(
      {In("x", {1, c, 5, 5})},
      {std::move(pad), MakeConv(rng, "conv", "p", "y", c, c, 3, group, true, conv_pad)}, {"y"});
}

TEST(PadConvFold, AddsPadsPerSide) {
  Rng rng(1);
  Graph g = PadConv(rng, MakePad({1, 2, 0, 3}), 1);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(std::get<std::vector<int64_t>>(r.graph.nodes[0].attrs.at("pads")),
            (std::vector<int64_t>{2, 3, 1, 4}));
  EXPECT_EQ(r.graph.nodes[0].inputs, std::vector<std::string>{"x"});
}

TEST(PadConvFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 31 + 9);
    const int64_t group = rng.Int(1, 2);
    Graph g = PadConv(rng, MakePad({rng.Int(0, 2), rng.Int(0, 2), rng.Int(0, 2), rng.Int(0, 2)}),
                      rng.Int(0, 1), group * rng.Int(1, 2), group);
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(PadConvFold, RefusesReflectPad) {
  Rng rng(2);
  ExpectNoFire(PadConv(rng, MakePad({1, 1, 1, 1}, "reflect")), kRule);
}

TEST(PadConvFold, RefusesNonZeroValue) {
  Rng rng(3);
  ExpectNoFire(PadConv(rng, MakePad({1, 1, 1, 1}, "constant", 0.5)), kRule);
}

TEST(PadConvFold, RefusesNegativeZeroValue) {
  Rng rng(4);
  ExpectNoFire(PadConv(rng, MakePad({1, 1, 1, 1}, "constant", -0.0)), kRule);
}

TEST(PadConvFold, RefusesWhenPadOutputHasAnotherConsumer) {
  Rng rng(5);
  Graph g = PadConv(rng, MakePad({1, 1, 1, 1}));
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"p"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(PadConvFold, RefusesWhenPadOutputIsGraphOutput) {
  Rng rng(6);
  Graph g = PadConv(rng, MakePad({1, 1, 1, 1}));
  g.outputs.push_back("p");
  ExpectNoFire(g, kRule);
}

TEST(PadConvFold, RefusesPadFeedingOnlyTheAddInput) {
  // FusedConv(x, p): the Pad feeds the add operand, not the convolution.
  Rng rng(7);
  Node pad = MakePad({1, 1, 1, 1});
  Node conv = MakeConv(rng, "conv", "x", "y", 2, 2, 3, 1, true, 0);  // out [1,2,5,5] pad 1
  conv.attrs["pads"] = std::vector<int64_t>{2, 2, 2, 2};
  conv.op = Op::FusedConv;
  conv.inputs = {"x", "p"};
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  conv.epilogue.push_back(add);
  Graph g = MakeGraph({In("x", {1, 2, 5, 5})}, {pad, conv}, {"y"});
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
