#include <gtest/gtest.h>

#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "quantize-activation-drop";

// x -> act -> Q(y) = "y".
Graph ActQ(Op op, QuantParams y, double lo = 0, double hi = 0) {
  AttrMap a;
  if (op == Op::Clip) a = {{"min", lo}, {"max", hi}};
  return MakeGraph({In("x", {1, 2, 4, 4})},
                   {MakeNode(op, "act", {"x"}, "a", a), QNode("q", "a", "y", std::move(y))}, {"y"});
}

TEST(QuantizeActivationDrop, DropsReluWhenTheZeroPointIsQmin) {
  for (QuantParams y : {U8(0.05, 0), I8(0.05, -128)}) {
    OptimizeResult r = ExpectFiresOnce(ActQ(Op::Relu, y), kRule);
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    EXPECT_EQ(r.graph.nodes[0].op, Op::QuantizeLinear);
    EXPECT_EQ(r.graph.nodes[0].inputs, std::vector<std::string>{"x"});
  }
}

TEST(QuantizeActivationDrop, DropsRelu6WhenTheRangeStopsShortOfSix) {
  // s * (qmax - z) = 0.02 * 255 = 5.1 < 6: the upper clamp never binds after Q.
  ExpectFiresOnce(ActQ(Op::Relu6, U8(0.02, 0)), kRule);
}

TEST(QuantizeActivationDrop, DropsAClipWithinHalfAStepOutsideTheEdges) {
  // s = 0.5, z = 0 (uint8): the grid is [0, 127.5]; bounds 0.24 and 127.26 round to the edges.
  ExpectFiresOnce(ActQ(Op::Clip, U8(0.5, 0), 0.24, 127.26), kRule);
  ExpectFiresOnce(ActQ(Op::Clip, U8(0.5, 0), -100, 1000), kRule);
}

TEST(QuantizeActivationDrop, PerAxisEveryChannelMustPass) {
  QuantParams y;
  y.type = QuantType::kUint8;
  y.scale = {0.5f, 0.25f};
  y.zero_point = {0, 0};
  y.axis = 1;
  ExpectFiresOnce(ActQ(Op::Relu, y), kRule);
  y.zero_point = {0, 1};
  ExpectNoFire(ActQ(Op::Relu, y), kRule);
}

// Negative: one per legality condition.
TEST(QuantizeActivationDrop, RefusesReluWhenTheZeroPointIsAboveQmin) {
  ExpectNoFire(ActQ(Op::Relu, U8(0.05, 128)), kRule);
  ExpectNoFire(ActQ(Op::Relu, I8(0.05, 0)), kRule);
  ExpectNoFire(ActQ(Op::Relu, U8(0.05, 1)), kRule);  // qmin + 1
}

TEST(QuantizeActivationDrop, RefusesABoundMoreThanHalfAStepInside) {
  // The half-step test: 0.26 / 0.5 = 0.52 rounds to 1 > qmin; 127.24 / 0.5 = 254.48 -> 254.
  ExpectNoFire(ActQ(Op::Clip, U8(0.5, 0), 0.26, 1000), kRule);
  ExpectNoFire(ActQ(Op::Clip, U8(0.5, 0), -1000, 127.24), kRule);
}

TEST(QuantizeActivationDrop, ATieRoundsToEven) {
  // 0.25 / 0.5 = 0.5 ties to 0 (even): exact; 0.75 / 0.5 = 1.5 ties to 2: not.
  ExpectFiresOnce(ActQ(Op::Clip, U8(0.5, 0), 0.25, 1000), kRule);
  ExpectNoFire(ActQ(Op::Clip, I8(0.5, -128), 0.75, 1000), kRule);
}

TEST(QuantizeActivationDrop, RefusesRelu6WhenTheRangeReachesBeyondSix) {
  ExpectNoFire(ActQ(Op::Relu6, U8(0.05, 0)), kRule);  // 0.05 * 255 = 12.75 > 6
}

TEST(QuantizeActivationDrop, RefusesAClipWithMinAboveMax) {
  ExpectNoFire(ActQ(Op::Clip, U8(0.5, 0), 1000, -1000), kRule);
}

TEST(QuantizeActivationDrop, RefusesANegativeScale) {
  Graph g = ActQ(Op::Relu, U8(-0.05, 0));
  g.options.allow_negative_scale = true;
  ExpectNoFire(g, kRule);
}

TEST(QuantizeActivationDrop, RefusesAnActivationOutputUsedElsewhere) {
  Graph g = ActQ(Op::Relu, U8(0.05, 0));
  g.outputs.push_back("a");
  ExpectNoFire(g, kRule);
}

TEST(QuantizeActivationDrop, RefusesOtherActivations) {
  ExpectNoFire(
      MakeGraph({In("x", {1, 2, 4, 4})},
                {MakeNode(Op::Sigmoid, "act", {"x"}, "a"), QNode("q", "a", "y", U8(1, 0))}, {"y"}),
      kRule);
}

}  // namespace
}  // namespace fusefuzz::testing
