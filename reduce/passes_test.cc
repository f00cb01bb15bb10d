// The reduction passes and the engine on their own (no target): each pass's edits are checked
// against hand-derived shapes and, where a pass claims to keep the semantics, against the
// reference interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/verifier.h"
#include "optimizer/test_util.h"
#include "reduce/reduce.h"

namespace fusefuzz::testing {
namespace {

std::optional<ReduceCase> ApplyPass(const ReducePass& p, const ReduceCase& c, int mode,
                                    int64_t begin, int64_t end) {
  ReduceContext ctx(c);
  std::optional<ReduceCase> out = p.Apply(ctx, mode, begin, end);
  if (out) RemoveDeadCode(*out);
  return out;
}

int64_t CountTargets(const ReducePass& p, const ReduceCase& c, int mode = 0) {
  ReduceContext ctx(c);
  return p.Targets(ctx, mode);
}

TEST(ValueLadder, CostsAndSteps) {
  EXPECT_EQ(ValueCost(0.0f), 0);
  EXPECT_EQ(ValueCost(1.0f), 1);
  EXPECT_EQ(ValueCost(-0.0f), 1);
  EXPECT_EQ(ValueCost(-1.0f), 2);
  EXPECT_LT(ValueCost(2.0f), ValueCost(0.75f));
  EXPECT_LT(ValueCost(0.75f), ValueCost(0.7f));
  EXPECT_EQ(ValueCost(NAN), 64);
  EXPECT_EQ(Simplify(0.7f, ValueStep::kZero), 0.0f);
  EXPECT_EQ(Simplify(-5.1f, ValueStep::kOne), -1.0f);
  EXPECT_EQ(Simplify(0.7f, ValueStep::kPowerOfTwo), 0.5f);  // log2 0.7 = -0.51 rounds to -1
  EXPECT_EQ(Simplify(-3.3f, ValueStep::kTwoBits), -3.0f);   // 0.825 * 4 -> 0.75 * 4
  EXPECT_EQ(Simplify(0.875f, ValueStep::kTwoBits), 1.0f);   // 0.875 rounds up to 1.0
  for (float v : {0.7f, -3.3f, 123.456f, 1e-6f}) {
    for (ValueStep s : kValueSteps) EXPECT_LT(ValueCost(Simplify(v, s)), ValueCost(v)) << v;
  }
}

TEST(CaseSize, OrderIsLexicographic) {
  CaseSize a{3, 1, 0, 10, 100, 1000}, b{2, 5, 0, 50, 500, 5000}, c{3, 1, 0, 9, 900, 9000};
  EXPECT_LT(b, a);  // fewer nodes wins over everything else
  EXPECT_LT(c, a);  // simpler geometry wins over more elements
}

TEST(RemoveDeadCode, DropsUnusedNodesAndInputs) {
  Rng rng(1);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4}), In("unused", {1, 2, 4, 4})},
                      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "dead", {"a"}, "d"),
                       MakeNode(Op::Sigmoid, "s", {"a"}, "y")},
                      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  RemoveDeadCode(c);
  ASSERT_EQ(c.graph.nodes.size(), 2u);
  EXPECT_EQ(c.graph.nodes[0].name, "r");
  EXPECT_EQ(c.graph.nodes[1].name, "s");
  ASSERT_EQ(c.graph.inputs.size(), 1u);
  EXPECT_EQ(c.inputs.count("unused"), 0u);
  EXPECT_TRUE(IsValidCase(c));
}

TEST(GroupsPass, BlockDiagonalKeepsTheNumbers) {
  Rng rng(2);
  Graph g =
      MakeGraph({In("x", {1, 4, 5, 5})}, {MakeConv(rng, "conv", "x", "y", 4, 6, 3, 2)}, {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeGroupsPass();
  ASSERT_EQ(CountTargets(*pass, c), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  const Node& conv = r->graph.nodes[0];
  EXPECT_EQ(GetConvAttrs(conv).group, 1);
  EXPECT_EQ(conv.params.at("W").shape, (Shape{6, 4, 3, 3}));
  // Output 4 (group 1) reads input channels 2..3 only: W'[4, 0..1] are zero, W'[4, 2] = W[4, 0].
  EXPECT_EQ(conv.params.at("W").data[(4 * 4 + 0) * 9], 0.0f);
  EXPECT_EQ(conv.params.at("W").data[(4 * 4 + 2) * 9 + 5],
            g.nodes[0].params.at("W").data[(4 * 2 + 0) * 9 + 5]);
  RefTensor before = RunReference(g, c.inputs).at("y");
  RefTensor after = RunReference(r->graph, r->inputs).at("y");
  EXPECT_EQ(before.value, after.value);  // extra terms are exact zeros
  EXPECT_EQ(CountTargets(*pass, *r), 0);
}

TEST(ChannelsPass, SlicesConvBnConstChainConsistently) {
  Rng rng(3);
  Node add = MakeNode(Op::Add, "add", {"r"}, "a", {}, {{"B", RandTensor(rng, {1, 6, 1, 1})}});
  Graph g = MakeGraph(
      {In("x", {1, 4, 6, 6})},
      {MakeConv(rng, "c1", "x", "c", 4, 6, 3, 1, true, 1), MakeBn(rng, "bn", "c", "b", 6),
       MakeNode(Op::Relu, "relu", {"b"}, "r"), add, MakeConv(rng, "c2", "a", "y", 6, 2, 1)},
      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeChannelsPass();
  ASSERT_EQ(CountTargets(*pass, c), 3);  // x's class, the 6-channel middle, y's class
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 3);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(r->graph.inputs[0].shape, (Shape{1, 2, 6, 6}));
  EXPECT_EQ(r->inputs.at("x").shape, (Shape{1, 2, 6, 6}));
  EXPECT_EQ(r->graph.nodes[0].params.at("W").shape, (Shape{3, 2, 3, 3}));
  EXPECT_EQ(r->graph.nodes[0].params.at("B").shape, (Shape{3}));
  EXPECT_EQ(r->graph.nodes[1].params.at("var").shape, (Shape{3}));
  EXPECT_EQ(r->graph.nodes[3].params.at("B").shape, (Shape{1, 3, 1, 1}));
  EXPECT_EQ(r->graph.nodes[4].params.at("W").shape, (Shape{1, 3, 1, 1}));
  // The kept channels carry the same numbers: W'[m, c] = W[m, c] for the first halves.
  EXPECT_EQ(r->graph.nodes[0].params.at("W").data[(1 * 2 + 1) * 9 + 4],
            g.nodes[0].params.at("W").data[(1 * 4 + 1) * 9 + 4]);
  // Only the middle class: the graph input keeps its 4 channels.
  std::optional<ReduceCase> mid = ApplyPass(*pass, c, 0, 1, 2);
  ASSERT_TRUE(mid && IsValidCase(*mid));
  EXPECT_EQ(mid->graph.inputs[0].shape, (Shape{1, 4, 6, 6}));
  EXPECT_EQ(mid->graph.nodes[0].params.at("W").shape, (Shape{3, 4, 3, 3}));
}

TEST(ChannelsPass, GroupedConvHalvesTheGroupCount) {
  Rng rng(4);
  Graph g =
      MakeGraph({In("x", {1, 4, 5, 5})},
                {MakeConv(rng, "dw", "x", "d", 4, 8, 3, 4), MakeBn(rng, "bn", "d", "y", 8)}, {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeChannelsPass();
  ASSERT_EQ(CountTargets(*pass, c), 1);  // input and output linked through the groups
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(GetConvAttrs(r->graph.nodes[0]).group, 2);
  EXPECT_EQ(r->graph.nodes[0].params.at("W").shape, (Shape{4, 1, 3, 3}));
  // Group g of the smaller conv computes exactly what group g of the original did.
  RefTensor before = RunReference(g, c.inputs, true).at("d");
  RefTensor after = RunReference(r->graph, r->inputs, true).at("d");
  for (size_t i = 0; i < after.value.size(); ++i) EXPECT_EQ(after.value[i], before.value[i]);
}

TEST(ChannelsPass, LeavesConcatClassesAlone) {
  Graph g = MakeGraph(
      {In("x", {1, 4, 3, 3})},
      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Concat, "cat", {"a", "x"}, "y")}, {"y"});
  Rng rng(5);
  ReduceCase c{g, RandInputs(rng, g)};
  EXPECT_EQ(CountTargets(*MakeChannelsPass(), c), 0);
}

TEST(KernelPass, SameConvKeepsItsOutputSize) {
  Rng rng(6);
  Graph g = MakeGraph({In("x", {1, 2, 7, 7})},
                      {MakeConv(rng, "conv", "x", "y", 2, 3, 3, 1, true, 1)}, {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  std::optional<ReduceCase> r = ApplyPass(*MakeKernelPass(), c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  const Node& conv = r->graph.nodes[0];
  EXPECT_EQ(conv.params.at("W").shape, (Shape{3, 2, 1, 1}));
  EXPECT_EQ(AttrInts(conv, "pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(conv.params.at("W").data[1 * 2 + 1],
            g.nodes[0].params.at("W").data[(1 * 2 + 1) * 9 + 4]);
  EXPECT_EQ(VerifyGraph(r->graph).at("y"), (Shape{1, 3, 7, 7}));
}

TEST(DilationPass, SameDilatedConvKeepsItsOutputSize) {
  Rng rng(61);
  // 3x3 dilation 2 with pads 2: "same" on 9x9. Dilation 1 needs pads 1 for the same size.
  Node conv = MakeConv(rng, "conv", "x", "y", 2, 3, 3, 1, true, 2);
  conv.attrs["dilations"] = std::vector<int64_t>{2, 2};
  Graph g = MakeGraph({In("x", {1, 2, 9, 9})}, {conv}, {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeDilationPass();
  ASSERT_EQ(CountTargets(*pass, c), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  const ConvAttrs a = GetConvAttrs(r->graph.nodes[0]);
  EXPECT_EQ(a.dilation_h, 1);
  EXPECT_EQ(a.dilation_w, 1);
  EXPECT_EQ(AttrInts(r->graph.nodes[0], "pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(VerifyGraph(r->graph).at("y"), (Shape{1, 3, 9, 9}));
  EXPECT_EQ(CountTargets(*pass, *r), 0);  // nothing left to do: the pass cannot loop
}

TEST(StridePass, ToOneThenHalveOnlyTouchStridedNodes) {
  Rng rng(62);
  Graph g = MakeGraph({In("x", {1, 2, 16, 16})},
                      {MakeConv(rng, "plain", "x", "a", 2, 2, 3, 1, true, 1),
                       MakeConv(rng, "s4", "a", "b", 2, 2, 3, 1, true, 1, 4),
                       MakeNode(Op::MaxPool, "pool", {"b"}, "y",
                                {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                 {"strides", std::vector<int64_t>{2, 2}}})},
                      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeStridePass();
  ASSERT_EQ(CountTargets(*pass, c), 2);  // s4 and pool, not the stride-1 conv
  std::optional<ReduceCase> halved = ApplyPass(*pass, c, 1, 0, 1);
  ASSERT_TRUE(halved && IsValidCase(*halved));
  EXPECT_EQ(AttrInts(halved->graph.nodes[1], "strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(AttrInts(halved->graph.nodes[2], "strides"), (std::vector<int64_t>{2, 2}));
  std::optional<ReduceCase> ones = ApplyPass(*pass, c, 0, 0, 2);
  ASSERT_TRUE(ones && IsValidCase(*ones));
  EXPECT_EQ(AttrInts(ones->graph.nodes[1], "strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(AttrInts(ones->graph.nodes[2], "strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(VerifyGraph(ones->graph).at("y"), (Shape{1, 2, 15, 15}));
  EXPECT_EQ(CountTargets(*pass, *ones), 0);
}

TEST(CutPass, NewInputCarriesTheReferenceValues) {
  Rng rng(7);
  Graph g = MakeGraph({In("x", {1, 2, 5, 5})},
                      {MakeConv(rng, "conv", "x", "c", 2, 3, 3),
                       MakeNode(Op::Relu, "relu", {"c"}, "r"), MakeBn(rng, "bn", "r", "y", 3)},
                      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeCutPass();
  ASSERT_EQ(CountTargets(*pass, c), 2);  // conv and relu; bn makes the output
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 2u);
  ASSERT_EQ(r->graph.inputs.size(), 1u);
  EXPECT_EQ(r->graph.inputs[0].name, "c");
  EXPECT_EQ(r->graph.inputs[0].shape, (Shape{1, 3, 3, 3}));
  RefTensor before = RunReference(g, c.inputs).at("y");
  RefTensor after = RunReference(r->graph, r->inputs).at("y");
  for (size_t i = 0; i < before.value.size(); ++i) {
    EXPECT_NEAR(after.value[i], before.value[i], 1e-5 * (1 + std::fabs(before.value[i])));
  }
}

TEST(BypassPass, RewiresConsumersAndOutputs) {
  Rng rng(8);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "b"),
                       MakeNode(Op::Sigmoid, "s", {"b"}, "y")},
                      {"b", "y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeBypassPass();
  ASSERT_EQ(CountTargets(*pass, c), 3);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 1, 2);  // bypass the Tanh
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 2u);
  EXPECT_EQ(r->graph.nodes[1].inputs, (std::vector<std::string>{"a"}));
  EXPECT_EQ(r->graph.outputs, (std::vector<std::string>{"a", "y"}));
  // Bypassing all three would leave only a graph input as output: no candidate.
  EXPECT_FALSE(ApplyPass(*pass, c, 0, 0, 3).has_value());
}

// The engine with a synthetic property: "there is a Conv and a Sigmoid".
TEST(Reduce, ShrinksToTheSmallestInterestingCaseDeterministically) {
  Rng rng(9);
  Graph g = MakeGraph({In("x", {2, 4, 8, 8})},
                      {MakeConv(rng, "c1", "x", "c", 4, 4, 3, 2, true, 1),
                       MakeNode(Op::Relu, "r", {"c"}, "a"), MakeBn(rng, "bn", "a", "b", 4),
                       MakeNode(Op::Sigmoid, "s", {"b"}, "y"), MakeNode(Op::Tanh, "t", {"c"}, "z")},
                      {"y", "z"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto interesting = [](const ReduceCase& k) {
    return CountOp(k.graph, Op::Conv) == 1 && CountOp(k.graph, Op::Sigmoid) == 1;
  };
  ReduceStats st1, st2;
  auto passes = DefaultReducePasses();
  ReduceCase a = Reduce(c, passes, interesting, {}, &st1);
  ReduceCase b = Reduce(c, passes, interesting, {}, &st2);
  ASSERT_EQ(a.graph.nodes.size(), 2u);
  const Node& conv = a.graph.nodes[a.graph.nodes[0].op == Op::Conv ? 0 : 1];
  EXPECT_EQ(conv.params.at("W").shape, (Shape{1, 1, 1, 1}));
  EXPECT_EQ(conv.params.at("W").data, std::vector<float>{0.0f});
  EXPECT_EQ(GetConvAttrs(conv).group, 1);
  for (const auto& in : a.graph.inputs) {
    EXPECT_EQ(in.shape, (Shape{1, 1, 1, 1}));
    EXPECT_EQ(a.inputs.at(in.name).data, std::vector<float>{0.0f});
  }
  EXPECT_FALSE(st1.stopped_early);
  EXPECT_EQ(a.graph, b.graph);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(st1.tests, st2.tests);
  EXPECT_LT(SizeOf(a), SizeOf(c));
}

TEST(Reduce, MaxTestsStopsEarly) {
  Rng rng(10);
  Graph g =
      MakeGraph({In("x", {1, 2, 4, 4})},
                {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "y")}, {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  ReduceOptions o;
  o.max_tests = 1;
  ReduceStats st;
  Reduce(
      c, DefaultReducePasses(), [](const ReduceCase&) { return false; }, o, &st);
  EXPECT_EQ(st.tests, 1);
  EXPECT_TRUE(st.stopped_early);
}

}  // namespace
}  // namespace fusefuzz::testing

namespace fusefuzz::testing {
namespace {

TEST(AttrValuesPass, FloatAttrsFollowTheLadder) {
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})},
                      {MakeNode(Op::LeakyRelu, "l", {"x"}, "a", {{"alpha", 0.3}}),
                       MakeNode(Op::Clip, "c", {"a"}, "y", {{"min", -0.7}, {"max", 1.0}})},
                      {"y"});
  Rng rng(11);
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeAttrValuesPass();
  EXPECT_EQ(CountTargets(*pass, c, 0), 3);                     // alpha, min, max: each can go to 0
  EXPECT_EQ(CountTargets(*pass, c, 1), 2);                     // max is already 1
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 2, 0, 2);  // pow2: alpha and min
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(AttrFloat(r->graph.nodes[0], "alpha"), 0.25);
  EXPECT_EQ(AttrFloat(r->graph.nodes[1], "min"), -0.5);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  // Both bounds to 0 in one chunk: the first goes, the second would close the Clip and stays.
  r = ApplyPass(*pass, c, 0, 1, 3);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_LT(AttrFloat(r->graph.nodes[1], "min"), AttrFloat(r->graph.nodes[1], "max"));
  EXPECT_LT(SizeOf(*r), SizeOf(c));
}

TEST(AttrValuesPass, AClipNeverBecomesAConstant) {
  // Clip(0, 1) to Clip(0, 0) would make the output a constant that tells the oracle nothing.
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})},
                      {MakeNode(Op::Clip, "c", {"x"}, "y", {{"min", 0.0}, {"max", 1.0}})}, {"y"});
  Rng rng(12);
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeAttrValuesPass();
  for (int mode = 0; mode < pass->modes(); ++mode) EXPECT_EQ(CountTargets(*pass, c, mode), 0);
}

}  // namespace
}  // namespace fusefuzz::testing
