// Faults beyond the BN/epilogue family: sub-const-side, pad-mode-ignored, pool-nonmonotone.
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"

namespace fusefuzz::testing {
namespace {

// x -> conv -> Sub with constant c on the `left` or right -> y
Graph ConvSub(Rng& rng, bool left) {
  Node sub = MakeNode(Op::Sub, "sub", {"c"}, "y");
  sub.params[left ? "A" : "B"] = RandTensor(rng, {1, 4, 1, 1}, -2, 2);
  return MakeGraph({In("x", {1, 3, 6, 6})},
                   {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1), sub}, {"y"});
}

TEST(SubConstSide, VisibleWithConstantOnTheLeft) {
  Rng rng(111);
  Graph g = ConvSub(rng, true);
  ExpectFaultVisible(g, RandInputs(rng, g), "sub-const-side");
}

TEST(SubConstSide, InvisibleWithConstantOnTheRight) {
  Rng rng(112);
  Graph g = ConvSub(rng, false);
  ExpectFaultInvisible(g, RandInputs(rng, g), "sub-const-side", true);
}

// x -> Pad(mode, value, 1 on every side) -> conv (no pads) -> y
Graph PadConv(Rng& rng, const std::string& mode, double value) {
  Node pad =
      MakeNode(Op::Pad, "pad", {"x"}, "p",
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"mode", mode}, {"value", value}});
  return MakeGraph({In("x", {1, 3, 6, 6})},
                   {pad, MakeConv(rng, "conv", "p", "y", 3, 4, 3, 1, true, 0)}, {"y"});
}

TEST(PadModeIgnored, VisibleForReflectPadding) {
  Rng rng(121);
  Graph g = PadConv(rng, "reflect", 0);
  ExpectFaultVisible(g, RandInputs(rng, g), "pad-mode-ignored");
}

TEST(PadModeIgnored, VisibleForNonZeroFill) {
  Rng rng(122);
  Graph g = PadConv(rng, "constant", 1.5);
  ExpectFaultVisible(g, RandInputs(rng, g), "pad-mode-ignored");
}

TEST(PadModeIgnored, InvisibleForZeroFill) {
  Rng rng(123);
  Graph g = PadConv(rng, "constant", 0);
  ExpectFaultInvisible(g, RandInputs(rng, g), "pad-mode-ignored", true);
}

// x -> act -> MaxPool 2x2 stride 2 -> y
Graph ActPool(Op act) {
  Node pool = MakeNode(
      Op::MaxPool, "pool", {"a"}, "y",
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  return MakeGraph({In("x", {1, 2, 6, 6})}, {MakeNode(act, "act", {"x"}, "a"), pool}, {"y"});
}

TEST(PoolNonmonotone, VisibleForSiluOnNegativeInputs) {
  Rng rng(131);
  Graph g = ActPool(Op::Silu);
  // SiLU decreases below about -1.28: there the window's max x is not its max silu(x).
  ExpectFaultVisible(g, RandInputs(rng, g, -5, 0), "pool-nonmonotone");
}

TEST(PoolNonmonotone, InvisibleForSiluOnPositiveInputs) {
  Rng rng(132);
  Graph g = ActPool(Op::Silu);
  ExpectFaultInvisible(g, RandInputs(rng, g, 0, 4), "pool-nonmonotone", true);
}

TEST(PoolNonmonotone, InvisibleForRelu) {
  Rng rng(133);
  Graph g = ActPool(Op::Relu);
  ExpectFaultInvisible(g, RandInputs(rng, g), "pool-nonmonotone", true);
}

}  // namespace
}  // namespace fusefuzz::testing
