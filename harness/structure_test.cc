// Issue 28 items 1 and 2: one root cause, one folder; different causes, different folders; and a
// case containing a filed finding's minimized graph is recognized as its duplicate.
#include "harness/structure.h"

#include <gtest/gtest.h>

#include "harness/repro.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// The signature of an unblamed fusion finding (a black-box target) on graph `g`.
std::string UnblamedSignature(const Graph& g) {
  Repro r;
  r.target = "exec:black-box";
  r.kind = FindingKind::kFusion;
  r.graph = g;
  return Signature(r);
}

Node Conv(Rng& rng, const std::string& in, const std::string& out, int64_t k, int64_t pad) {
  return MakeConv(rng, "conv", in, out, 2, 2, k, 1, true, pad);
}

TEST(Structure, WhatTheMinimizerLeftByChanceDoesNotSplitACause) {
  Rng rng(1);
  // Conv -> Relu6 with a 1x1 kernel, no pads...
  const std::string a = UnblamedSignature(
      MakeGraph({In("x", {1, 2, 5, 5})},
                {Conv(rng, "x", "c", 1, 0), MakeNode(Op::Relu6, "act", {"c"}, "y")}, {"y"}));
  // ... and with a 3x3 kernel and pads the minimizer could not remove.
  const std::string b = UnblamedSignature(
      MakeGraph({In("x", {1, 2, 5, 5})},
                {Conv(rng, "x", "c", 3, 1), MakeNode(Op::Relu6, "act", {"c"}, "y")}, {"y"}));
  EXPECT_EQ(a, b);
  // A FusedConv without epilogue is a Conv.
  Node fused = Conv(rng, "x", "c", 1, 0);
  fused.op = Op::FusedConv;
  const std::string c = UnblamedSignature(
      MakeGraph({In("x", {1, 2, 5, 5})}, {fused, MakeNode(Op::Relu6, "act", {"c"}, "y")}, {"y"}));
  EXPECT_EQ(a, c);
  // Which graph input is the residual of an Add does not matter.
  auto residual = [&](int which) {
    return UnblamedSignature(
        MakeGraph({In("x0", {1, 2, 5, 5}), In("x1", {1, 2, 5, 5})},
                  {Conv(rng, which == 0 ? "x1" : "x0", "c", 1, 0),
                   MakeNode(Op::Add, "add", {"c", which == 0 ? "x0" : "x1"}, "y")},
                  {"y"}));
  };
  EXPECT_EQ(residual(0), residual(1));
  // Epilogue lists of a FusedConv: whether there is one, not its steps.
  auto epilogue = [&](std::vector<Op> acts) {
    Node n = Conv(rng, "x", "y", 1, 0);
    n.op = Op::FusedConv;
    for (Op act : acts) {
      EpilogueStep e;
      e.kind = EpilogueKind::kActivation;
      e.act = act;
      n.epilogue.push_back(e);
    }
    return UnblamedSignature(MakeGraph({In("x", {1, 2, 5, 5})}, {n}, {"y"}));
  };
  // A FusedConv's epilogue steps sign as the nodes they are: FusedConv(Relu6) is Conv -> Relu6,
  // whether a generator drew it fused or not (the minimizer drops the steps a bug does not need).
  EXPECT_EQ(epilogue({Op::Relu6}), a);
  EXPECT_NE(epilogue({Op::Relu}), a);
  EXPECT_NE(epilogue({Op::Relu6}), epilogue({Op::Relu6, Op::Sigmoid}));
  // A clamp step is a Clip node; an add step an Add of its operand.
  Node clamped = Conv(rng, "x", "y", 1, 0);
  clamped.op = Op::FusedConv;
  EpilogueStep clamp;
  clamp.kind = EpilogueKind::kClamp;
  clamp.attrs = {{"min", 0.0}, {"max", 6.0}};
  clamped.epilogue = {clamp};
  const Graph clip_graph =
      MakeGraph({In("x", {1, 2, 5, 5})},
                {Conv(rng, "x", "c", 3, 1),
                 MakeNode(Op::Clip, "clip", {"c"}, "y", {{"min", 0.0}, {"max", 6.0}})},
                {"y"});
  EXPECT_EQ(UnblamedSignature(MakeGraph({In("x", {1, 2, 5, 5})}, {clamped}, {"y"})),
            UnblamedSignature(clip_graph));
  EXPECT_EQ(OpChain(MakeGraph({In("x", {1, 2, 5, 5})}, {clamped}, {"y"})), "Conv\u2192Clip");
  Node added = Conv(rng, "x0", "y", 1, 0);
  added.op = Op::FusedConv;
  added.inputs.push_back("x1");
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  add.input = 1;
  added.epilogue = {add};
  EXPECT_EQ(UnblamedSignature(
                MakeGraph({In("x0", {1, 2, 5, 5}), In("x1", {1, 2, 5, 5})}, {added}, {"y"})),
            residual(0));
  // A filed Conv -> Clip pattern finds its bug drawn as FusedConv(Clip), and the reverse.
  const Graph fused_case = MakeGraph({In("x", {1, 2, 5, 5})}, {clamped}, {"y"});
  EXPECT_TRUE(ContainsPattern(fused_case, clip_graph, "y"));
  EXPECT_TRUE(ContainsPattern(clip_graph, fused_case, "y"));
}

TEST(Structure, AConstantsBroadcastClassKeepsCausesApart) {
  // A Mul constant that varies per channel and one that varies spatially are folded by
  // different (wrong) rules: they must not share a folder, or a --known baseline of one hides
  // the other.
  Rng rng(2);
  auto mul = [&](Shape shape) {
    return UnblamedSignature(
        MakeGraph({In("x", {1, 2, 4, 4})},
                  {Conv(rng, "x", "c", 1, 0),
                   MakeNode(Op::Mul, "mul", {"c"}, "y", {}, {{"B", RandTensor(rng, shape)}})},
                  {"y"}));
  };
  const std::string per_channel = mul({1, 2, 1, 1});
  EXPECT_EQ(per_channel, mul({2, 1, 1}));
  EXPECT_NE(per_channel, mul({1, 1, 4, 4}));
  EXPECT_NE(per_channel, mul({1}));
  EXPECT_NE(mul({1, 1, 4, 4}), mul({1}));
}

TEST(Structure, ContainsPatternUpstreamOfTheWorstOutput) {
  Rng rng(3);
  const Graph pattern =
      MakeGraph({In("x", {1, 2, 5, 5})},
                {Conv(rng, "x", "c", 1, 0),
                 MakeNode(Op::Clip, "clip", {"c"}, "y", {{"min", 0.0}, {"max", 6.0}})},
                {"y"});
  // A bigger case: Sigmoid -> Conv(3x3) -> Clip -> Tanh, and a side branch Relu.
  const Graph big =
      MakeGraph({In("x", {1, 2, 8, 8})},
                {MakeNode(Op::Sigmoid, "s", {"x"}, "a"), Conv(rng, "a", "c", 3, 1),
                 MakeNode(Op::Clip, "clip", {"c"}, "k", {{"min", 0.0}, {"max", 6.0}}),
                 MakeNode(Op::Tanh, "t", {"k"}, "y"), MakeNode(Op::Relu, "r", {"x"}, "z")},
                {"y", "z"});
  EXPECT_TRUE(ContainsPattern(big, pattern, "y"));
  EXPECT_TRUE(ContainsPattern(big, pattern, "k"));
  // The worst output on the side branch cannot come from the pattern.
  EXPECT_FALSE(ContainsPattern(big, pattern, "z"));
  // Conv and Clip not wired to each other: no match.
  const Graph apart =
      MakeGraph({In("x", {1, 2, 8, 8})},
                {Conv(rng, "x", "c", 1, 0),
                 MakeNode(Op::Clip, "clip", {"x"}, "k", {{"min", 0.0}, {"max", 6.0}}),
                 MakeNode(Op::Add, "add", {"c", "k"}, "y")},
                {"y"});
  EXPECT_FALSE(ContainsPattern(apart, pattern, "y"));
}

TEST(Structure, InPatternFormsRewritesTheMatchedActivationsOnly) {
  Rng rng(4);
  // Filed: Conv -> Clip(0, 0.5), the minimizer's form of a clamp bug.
  const Graph filed = MakeGraph({In("x", {1, 2, 5, 5})},
                                {Conv(rng, "x", "c", 1, 0), MakeNode(Op::Clip, "clip", {"c"}, "y",
                                                                     {{"min", 0.0}, {"max", 0.5}})},
                                {"y"});
  // A case: Conv -> HardSwish -> Add(x), and a Tanh on the side.
  const Graph big =
      MakeGraph({In("x", {1, 2, 5, 5})},
                {Conv(rng, "x", "c", 3, 1), MakeNode(Op::HardSwish, "hs", {"c"}, "h"),
                 MakeNode(Op::Add, "add", {"h", "x"}, "y"), MakeNode(Op::Tanh, "t", {"x"}, "z")},
                {"y", "z"});
  EXPECT_FALSE(ContainsPattern(big, filed, "y"));
  std::optional<Graph> r = InPatternForms(big, filed, "y");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->nodes[1].op, Op::Clip);
  EXPECT_EQ(AttrFloat(r->nodes[1], "max"), 0.5);
  EXPECT_EQ(r->nodes[3].op, Op::Tanh);  // not matched, not touched
  EXPECT_TRUE(ContainsPattern(*r, filed, "y"));
  // Not downstream of the pattern, or a Relu where the filed bug needs a clamp: no match.
  EXPECT_FALSE(InPatternForms(big, filed, "z"));
  Graph relu = big;
  relu.nodes[1].op = Op::Relu;
  EXPECT_FALSE(InPatternForms(relu, filed, "y"));
  // Already the filed form: ContainsPattern's business, nothing to rewrite.
  EXPECT_FALSE(InPatternForms(*r, filed, "y"));
  // In an epilogue: FusedConv(HardSigmoid) becomes FusedConv(clamp 0..0.5).
  Node fused = Conv(rng, "x", "y", 1, 0);
  fused.op = Op::FusedConv;
  EpilogueStep hs;
  hs.act = Op::HardSigmoid;
  fused.epilogue = {hs};
  r = InPatternForms(MakeGraph({In("x", {1, 2, 5, 5})}, {fused}, {"y"}), filed, "y");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->nodes[0].epilogue.size(), 1u);
  EXPECT_EQ(r->nodes[0].epilogue[0].kind, EpilogueKind::kClamp);
  EXPECT_EQ(std::get<double>(r->nodes[0].epilogue[0].attrs.at("max")), 0.5);
}

}  // namespace
}  // namespace fusefuzz::testing
