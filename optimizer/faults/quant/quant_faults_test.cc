// The quantized faults, structurally: each fires (and leaves a valid graph) where its rule
// refuses because of the one check it leaves out.
#include <gtest/gtest.h>

#include "optimizer/faults/fault_testing.h"
#include "optimizer/rules/quant/quant_test_util.h"

namespace fusefuzz::testing {
namespace {

// The fault fires on g where `rule` does not, and the result verifies.
void ExpectFaultWhereRuleRefuses(const Graph& g, const std::string& fault,
                                 const std::string& rule) {
  ExpectNoFire(g, rule);
  OptimizeResult r = Inject(g, fault);
  EXPECT_TRUE(Fired(r, fault)) << fault;
  VerifyGraph(r.graph);
  EXPECT_EQ(r.graph.outputs, g.outputs);
}

Graph ActQ(Op op, QuantParams y, double lo = 0, double hi = 0) {
  AttrMap a;
  if (op == Op::Clip) a = {{"min", lo}, {"max", hi}};
  return MakeGraph({In("x", {1, 2, 4, 4})},
                   {MakeNode(op, "act", {"x"}, "a", a), QNode("q", "a", "y", std::move(y))}, {"y"});
}

TEST(QuantFaults, ReluZeroPointIgnored) {
  ExpectFaultWhereRuleRefuses(ActQ(Op::Relu, U8(0.05, 128)), "relu-zero-point-ignored",
                              "quantize-activation-drop");
}

TEST(QuantFaults, ClipWithoutHalfStep) {
  ExpectFaultWhereRuleRefuses(ActQ(Op::Clip, U8(0.5, 0), 0.4, 127.1), "clip-without-half-step",
                              "quantize-activation-drop");
}

TEST(QuantFaults, Relu6OutsideRange) {
  ExpectFaultWhereRuleRefuses(ActQ(Op::Relu6, U8(0.05, 0)), "relu6-outside-range",
                              "quantize-activation-drop");
}

TEST(QuantFaults, BiasScaleUnchecked) {
  Rng rng(1);
  QConvSpec s;
  s.bias_scale_factor = 0.5;
  ExpectFaultWhereRuleRefuses(QConvGraph(rng, s), "bias-scale-unchecked", "qdq-conv-fuse");
  s.bias_scale_factor = 1;
  s.bias_zero_point = 5;
  ExpectFaultWhereRuleRefuses(QConvGraph(rng, s), "bias-scale-unchecked", "qdq-conv-fuse");
}

TEST(QuantFaults, ReluLiteralZeroClampsAtTheIntegerZero) {
  Rng rng(2);
  QConvSpec s;
  s.act = Op::Relu;
  OptimizeResult r = Inject(QConvGraph(rng, s), "relu-literal-zero");
  ASSERT_TRUE(Fired(r, "relu-literal-zero"));
  const Node& f = r.graph.nodes.back();
  ASSERT_EQ(f.epilogue.size(), 1u);
  EXPECT_EQ(f.epilogue[0].act, Op::Clip);
  EXPECT_FLOAT_EQ(AttrFloat(Op::Clip, f.epilogue[0].attrs, "min", ""), -100 * 0.1f);
}

TEST(QuantFaults, SaturateMinus127) {
  Rng rng(3);
  QConvSpec s;
  s.y = I8(0.1, 0);
  OptimizeResult r = Inject(QConvGraph(rng, s), "saturate-minus-127");
  ASSERT_TRUE(Fired(r, "saturate-minus-127"));
  VerifyGraph(r.graph);
  EXPECT_FLOAT_EQ(AttrFloat(Op::Clip, r.graph.nodes.back().epilogue[0].attrs, "min", ""), -12.7f);
}

Graph PadQConv(double value, int64_t zx) {
  Rng rng(3);
  QConvSpec s;
  s.x = U8(0.05, zx);
  s.pad = 0;
  Graph g = RunOnly(QConvGraph(rng, s), "qdq-conv-fuse").graph;
  g.nodes.insert(g.nodes.begin() + 1,
                 MakeNode(Op::Pad, "pad", {"xq"}, "xp",
                          {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"value", value}}));
  g.nodes[2].inputs = {"xp"};
  return g;
}

TEST(QuantFaults, PadValueNotZeroPoint) {
  ExpectFaultWhereRuleRefuses(PadQConv(7, 128), "pad-value-not-zero-point", "pad-qconv-fold");
}

TEST(QuantFaults, PadBorderCorrectionOnlyForTheIntegerZero) {
  ExpectFaultWhereRuleRefuses(PadQConv(0, 128), "pad-border-correction", "pad-qconv-fold");
  EXPECT_FALSE(Fired(Inject(PadQConv(7, 128), "pad-border-correction"), "pad-border-correction"));
}

Graph AddQ(QuantParams y) {
  return MakeGraph({In("a", {1, 2, 4, 4}), In("b", {1, 2, 4, 4})},
                   {QNode("qa", "a", "aq", U8(0.05, 128)), DQNode("dqa", "aq", "ad", U8(0.05, 128)),
                    QNode("qb", "b", "bq", U8(0.1, 3)), DQNode("dqb", "bq", "bd", U8(0.1, 3)),
                    MakeNode(Op::Add, "add", {"ad", "bd"}, "s"),
                    MakeNode(Op::Relu, "relu", {"s"}, "r"), QNode("qy", "r", "y", y)},
                   {"y"});
}

TEST(QuantFaults, AddReluNarrowedTakesTheInputsGrid) {
  OptimizeResult r = Inject(AddQ(U8(0.08, 10)), "add-relu-narrowed");
  ASSERT_TRUE(Fired(r, "add-relu-narrowed"));
  EXPECT_EQ(r.graph.nodes.back().quant.at("y"), U8(0.05, 128));
}

TEST(QuantFaults, SumSaturateEarlyClampsThreeStepsShort) {
  OptimizeResult r = Inject(AddQ(U8(0.08, 10)), "sum-saturate-early");
  ASSERT_TRUE(Fired(r, "sum-saturate-early"));
  VerifyGraph(r.graph);
  EXPECT_EQ(r.graph.nodes.back().op, Op::Clip);
  EXPECT_EQ(AttrFloat(r.graph.nodes.back(), "max"), 252);
  EXPECT_EQ(r.graph.nodes.back().output, "y");
}

TEST(QuantFaults, MaxPoolNegativeScale) {
  const QuantParams p = U8(-0.1, 3);
  Node pool = MakeNode(
      Op::MaxPool, "pool", {"d"}, "m",
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  Graph g = MakeGraph(
      {In("x", {1, 2, 4, 4})},
      {QNode("q1", "x", "q", p), DQNode("dq", "q", "d", p), pool, QNode("q2", "m", "y", p)}, {"y"});
  g.options.allow_negative_scale = true;
  ExpectFaultWhereRuleRefuses(g, "maxpool-negative-scale", "qdq-maxpool-fold");
}

TEST(QuantFaults, RequantizeFanOutFeedsTheIntegersToTheOtherConsumer) {
  const QuantParams p = U8(0.05, 128);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {QNode("q1", "x", "q", p), DQNode("dq", "q", "d", p),
                       MakeNode(Op::Relu, "other", {"d"}, "o"), QNode("q2", "d", "y", p)},
                      {"y", "o"});
  ExpectFaultWhereRuleRefuses(g, "requantize-fan-out", "qdq-pair-merge");
  OptimizeResult r = Inject(g, "requantize-fan-out");
  EXPECT_EQ(CountOp(r.graph, Op::DequantizeLinear), 0);
  EXPECT_EQ(r.graph.nodes[1].inputs, std::vector<std::string>{"y"});
}

}  // namespace
}  // namespace fusefuzz::testing

namespace fusefuzz::testing {
namespace {

Graph ConvBnQ(Rng& rng, const QConvSpec& s = {}) {
  Graph g = QConvGraph(rng, s);
  g.nodes.insert(g.nodes.end() - 1, MakeBn(rng, "bn", "c", "b", s.m));
  g.nodes.back().inputs = {"b"};
  return g;
}

TEST(QuantFaults, BnFoldStaleGridKeepsTheOldScale) {
  Rng rng(8);
  Graph g = ConvBnQ(rng);
  OptimizeResult r = Inject(g, "bn-fold-stale-grid");
  ASSERT_TRUE(Fired(r, "bn-fold-stale-grid"));
  VerifyGraph(r.graph);
}

TEST(QuantFaults, SharedWeightFoldedTwiceNeedsTheOtherChain) {
  Rng rng(9);
  Graph g = ConvBnQ(rng);
  EXPECT_FALSE(Fired(Inject(g, "shared-weight-folded-twice"), "shared-weight-folded-twice"));
  // A second chain on the same DQ with the same weight and its own BN.
  Node conv2 = g.nodes[2];
  conv2.name = "conv2";
  conv2.output = "c2";
  Node bn2 = MakeBn(rng, "bn2", "c2", "b2", 3);
  g.nodes.push_back(conv2);
  g.nodes.push_back(bn2);
  g.outputs.push_back("b2");
  OptimizeResult r = Inject(g, "shared-weight-folded-twice");
  EXPECT_TRUE(Fired(r, "shared-weight-folded-twice"));
  VerifyGraph(r.graph);
}

}  // namespace
}  // namespace fusefuzz::testing
