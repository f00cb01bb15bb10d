#include <gtest/gtest.h>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "pad-pool-fold";

Node MakePool(Op op, int64_t k, int64_t stride, int64_t pad, bool count_include_pad,
              bool ceil = false) {
  AttrMap a = {{"kernel_shape", std::vector<int64_t>{k, k}},
               {"strides", std::vector<int64_t>{stride, stride}},
               {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
               {"ceil_mode", int64_t{ceil}}};
  if (op == Op::AvgPool) a["count_include_pad"] = int64_t{count_include_pad};
  return MakeNode(op, "pool", {"p"}, "y", a);
}

Node MakePad(std::string in, std::vector<int64_t> pads, double value = 0.0,
             std::string mode = "constant") {
  return MakeNode(Op::Pad, "pad", {std::move(in)}, "p",
                  {{"pads", std::move(pads)}, {"mode", std::move(mode)}, {"value", value}});
}

Graph AvgCase(std::vector<int64_t> pads, int64_t k, int64_t stride, int64_t pool_pad,
              bool include = true, double value = 0.0, bool ceil = false) {
  return MakeGraph({In("x", {1, 2, 6, 6})},
                   {MakePad("x", std::move(pads), value),
                    MakePool(Op::AvgPool, k, stride, pool_pad, include, ceil)},
                   {"y"});
}

// x -> act -> Pad(value) -> MaxPool.
Graph MaxCase(Node act, std::vector<int64_t> pads, double value, int64_t k = 3,
              int64_t stride = 1) {
  return MakeGraph({In("x", {1, 2, 6, 6})},
                   {std::move(act), MakePad("a", std::move(pads), value),
                    MakePool(Op::MaxPool, k, stride, 0, false)},
                   {"y"});
}

TEST(PadPoolFold, AvgPoolCountIncludePad) {
  Graph g = AvgCase({1, 0, 1, 2}, 3, 1, 0);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  ASSERT_EQ(r.graph.nodes.size(), 1u);
  EXPECT_EQ(std::get<std::vector<int64_t>>(r.graph.nodes[0].attrs.at("pads")),
            (std::vector<int64_t>{1, 0, 1, 2}));
  Rng rng(1);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "avg");
}

TEST(PadPoolFold, MaxPoolAfterRelu) {
  Graph g = MaxCase(MakeNode(Op::Relu, "act", {"x"}, "a"), {1, 1, 1, 1}, 0.0);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  EXPECT_EQ(r.graph.nodes.size(), 2u);
  Rng rng(2);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "max");
}

TEST(PadPoolFold, MaxPoolAfterClipWithPadBelowMin) {
  Graph g = MaxCase(MakeNode(Op::Clip, "act", {"x"}, "a", {{"min", 0.5}, {"max", 1.0}}),
                    {1, 1, 1, 1}, -1.0);
  ExpectFiresOnce(g, kRule);
}

TEST(PadPoolFold, MaxPoolAfterInvertedClipUsesMaxAsLowerBound) {
  // min > max: every output is max = -0.5, so a pad value of 0 (> -0.5) would win windows: no
  // fold; -1 (below every output) folds, and the result agrees.
  Node act = MakeNode(Op::Clip, "act", {"x"}, "a", {{"min", 1.0}, {"max", -0.5}});
  ExpectNoFire(MaxCase(act, {1, 1, 1, 1}, 0.0), kRule);
  Graph g = MaxCase(act, {1, 1, 1, 1}, -1.0);
  OptimizeResult r = ExpectFiresOnce(g, kRule);
  Rng rng(4);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "inverted clip");
}

TEST(PadPoolFold, MaxPoolAfterFusedConvRelu) {
  Rng rng(3);
  Node conv = MakeConv(rng, "act", "x", "a", 2, 2, 1);
  conv.op = Op::FusedConv;
  conv.epilogue.push_back(EpilogueStep{});
  ExpectFiresOnce(MaxCase(conv, {1, 1, 1, 1}, 0.0), kRule);
}

TEST(PadPoolFold, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 37 + 1);
    const int64_t k = rng.Int(2, 3), stride = rng.Int(1, 2);
    std::vector<int64_t> pads;
    for (int i = 0; i < 4; ++i) pads.push_back(rng.Int(0, k - 1));
    Graph g;
    if (rng.Coin()) {
      // Ceil mode too: folding is refused only when it would change the output shape.
      const bool ceil = rng.Coin();
      g = AvgCase(pads, k, stride, 0, true, 0.0, ceil);
      if (ceil && RunOnly(g, kRule).rewrites.empty()) continue;
    } else {
      Node act = rng.Coin() ? MakeNode(Op::Relu, "act", {"x"}, "a")
                            : MakeNode(Op::Sigmoid, "act", {"x"}, "a");
      g = MaxCase(act, pads, rng.Coin() ? 0.0 : -0.5, k, stride);
    }
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(PadPoolFold, RefusesAvgPoolWithoutCountIncludePad) {
  ExpectNoFire(AvgCase({1, 1, 1, 1}, 3, 1, 0, /*include=*/false), kRule);
}

TEST(PadPoolFold, RefusesAvgPoolNonZeroValue) {
  ExpectNoFire(AvgCase({1, 1, 1, 1}, 3, 1, 0, true, 1.0), kRule);
}

TEST(PadPoolFold, RefusesReflectPad) {
  Graph g = AvgCase({1, 1, 1, 1}, 3, 1, 0);
  g.nodes[0].attrs["mode"] = std::string("reflect");
  ExpectNoFire(g, kRule);
}

TEST(PadPoolFold, RefusesMaxPoolOnUnboundedInput) {
  Graph g = MakeGraph({In("x", {1, 2, 6, 6})},
                      {MakePad("x", {1, 1, 1, 1}), MakePool(Op::MaxPool, 3, 1, 0, false)}, {"y"});
  ExpectNoFire(g, kRule);
}

TEST(PadPoolFold, RefusesMaxPoolWhenPadValueAboveLowerBound) {
  ExpectNoFire(MaxCase(MakeNode(Op::Relu, "act", {"x"}, "a"), {1, 1, 1, 1}, 0.5), kRule);
}

TEST(PadPoolFold, RefusesMaxPoolAfterNonBoundedActivation) {
  ExpectNoFire(MaxCase(MakeNode(Op::Tanh, "act", {"x"}, "a"), {1, 1, 1, 1}, 0.0), kRule);
}

TEST(PadPoolFold, RefusesFoldedPadsNotSmallerThanKernel) {
  ExpectNoFire(AvgCase({2, 0, 0, 0}, 3, 1, 1), kRule);
}

TEST(PadPoolFold, RefusesCeilModeShapeChange) {
  // in 6 + Pad right 1 = 7, k 2, s 2, ceil: out 4 (window at 6 starts in real data of the padded
  // tensor). Folded: in 6, pad right 1, ceil: the window at 6 starts in the padding: dropped, 3.
  ExpectNoFire(AvgCase({0, 0, 1, 1}, 2, 2, 0, true, 0.0, /*ceil=*/true), kRule);
}

TEST(PadPoolFold, RefusesWhenPadOutputHasAnotherConsumer) {
  Graph g = AvgCase({1, 1, 1, 1}, 3, 1, 0);
  g.nodes.push_back(MakeNode(Op::Relu, "r", {"p"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(PadPoolFold, RefusesWhenPadOutputIsGraphOutput) {
  Graph g = AvgCase({1, 1, 1, 1}, 3, 1, 0);
  g.outputs.push_back("p");
  ExpectNoFire(g, kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
