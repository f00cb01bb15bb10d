// Faults about where a BatchNorm sits: bn-bn-half-fold (two BNs after a conv) and
// bn-before-padded-conv (a BN before a zero-padded conv).
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"

namespace fusefuzz::testing {
namespace {

Graph ConvBnBn(Rng& rng, Node bn1, Node bn2) {
  return MakeGraph(
      {In("x", {1, 3, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1), std::move(bn1), std::move(bn2)},
      {"y"});
}

TEST(BnBnHalfFold, VisibleWithShifts) {
  Rng rng(91);
  Graph g = ConvBnBn(rng, MakeBn(rng, "bn1", "c", "b", 4), MakeBn(rng, "bn2", "b", "y", 4));
  ExpectFaultVisible(g, RandInputs(rng, g), "bn-bn-half-fold");
  OptimizeResult bad = Inject(g, "bn-bn-half-fold");
  ASSERT_FALSE(bad.rewrites.empty());
  EXPECT_EQ(bad.rewrites[0].rule, "bn-bn-half-fold");
  EXPECT_EQ(bad.rewrites[0].nodes, (std::vector<std::string>{"conv", "bn1", "bn2"}));
}

TEST(BnBnHalfFold, InvisibleWithoutShifts) {
  Rng rng(92);
  // Pure per-channel scales commute: s1 * s2 * conv either way.
  Node bn1 =
      MakeBnWith("bn1", "c", "b", {2, -1, 0.5f, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 2, 0.5f, 1});
  Node bn2 =
      MakeBnWith("bn2", "b", "y", {0.5f, 3, 1, -2}, {0, 0, 0, 0}, {0, 0, 0, 0}, {4, 1, 1, 0.25f});
  Graph g = ConvBnBn(rng, bn1, bn2);
  ExpectFaultInvisible(g, RandInputs(rng, g), "bn-bn-half-fold", true);
}

Graph BnConv(Rng& rng, Node bn, int64_t pad, int64_t group = 1) {
  return MakeGraph({In("x", {1, 4, 6, 6})},
                   {std::move(bn), MakeConv(rng, "conv", "b", "y", 4, 4, 3, group, true, pad)},
                   {"y"});
}

TEST(BnBeforePaddedConv, VisibleAtTheBorders) {
  Rng rng(101);
  Graph g = BnConv(rng, MakeBn(rng, "bn", "x", "b", 4), 1);
  TensorMap in = RandInputs(rng, g);
  ExpectFaultVisible(g, in, "bn-before-padded-conv");
  // The interior (windows inside the image) is right; only the border ring moves.
  OptimizeResult bad = Inject(g, "bn-before-padded-conv");
  RefTensorMap want = RunReference(g, in), got = RunReference(bad.graph, in);
  const RefTensor& w = want.at("y");
  const RefTensor& c = got.at("y");
  double interior = 0, border = 0;
  for (int64_t ch = 0; ch < 4; ++ch) {
    for (int64_t h = 0; h < 6; ++h) {
      for (int64_t x = 0; x < 6; ++x) {
        const size_t i = size_t((ch * 6 + h) * 6 + x);
        const double d = std::fabs(w.value[i] - c.value[i]);
        const bool edge = h == 0 || h == 5 || x == 0 || x == 5;
        double& worst = edge ? border : interior;
        worst = std::max(worst, d);
      }
    }
  }
  EXPECT_LT(interior, 1e-4);
  EXPECT_GT(border, 1e-2);
}

TEST(BnBeforePaddedConv, VisibleOnDepthwiseConv) {
  Rng rng(102);
  Graph g = BnConv(rng, MakeBn(rng, "bn", "x", "b", 4), 1, 4);
  ExpectFaultVisible(g, RandInputs(rng, g), "bn-before-padded-conv");
}

TEST(BnBeforePaddedConv, InvisibleWithoutPadding) {
  Rng rng(103);
  Graph g = BnConv(rng, MakeBn(rng, "bn", "x", "b", 4), 0);
  ExpectFaultInvisible(g, RandInputs(rng, g), "bn-before-padded-conv", true);
}

TEST(BnBeforePaddedConv, InvisibleWithoutBnShift) {
  Rng rng(104);
  // t = 0: the BN maps the pad's zeros to zeros, so padding before or after it is the same.
  Node bn =
      MakeBnWith("bn", "x", "b", {2, -1, 0.5f, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 2, 0.5f, 1});
  Graph g = BnConv(rng, bn, 1);
  ExpectFaultInvisible(g, RandInputs(rng, g), "bn-before-padded-conv", true);
}

}  // namespace
}  // namespace fusefuzz::testing
