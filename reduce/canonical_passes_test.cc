// The passes that bring minimized cases of one bug to one form (docs/minimizer.md, "One form per
// bug"): fold-bn and fold-pad keep the function, expose keeps every operand of a final node,
// canonical-ops lowers ops; each is checked against the reference, and through the engine on a
// property that needs what the pass must keep.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/quant.h"
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

void ExpectSameValues(const ReduceCase& a, const ReduceCase& b, const std::string& out,
                      double tol) {
  RefTensor x = RunReference(a.graph, a.inputs).at(out);
  RefTensor y = RunReference(b.graph, b.inputs).at(out);
  ASSERT_EQ(x.value.size(), y.value.size());
  for (size_t i = 0; i < x.value.size(); ++i) {
    EXPECT_NEAR(y.value[i], x.value[i], tol * (1 + std::fabs(x.value[i])))
        << out << "[" << i << "]";
  }
}

TEST(FoldBnPass, FoldsIntoTheConvKeepingTheFunction) {
  Rng rng(21);
  Graph g = MakeGraph({In("x", {1, 3, 6, 6})},
                      {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1),
                       MakeBn(rng, "bn", "c", "b", 4), MakeNode(Op::Relu6, "r", {"b"}, "y")},
                      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeFoldBnPass();
  ASSERT_EQ(CountTargets(*pass, c), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 2u);
  EXPECT_EQ(r->graph.nodes[0].op, Op::Conv);
  EXPECT_EQ(r->graph.nodes[1].inputs[0], r->graph.nodes[0].output);
  ExpectSameValues(c, *r, "y", 1e-5);
  // Without a bias the fold gives the conv one.
  c.graph.nodes[0].params.erase("B");
  r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ExpectSameValues(c, *r, "y", 1e-5);
}

TEST(FoldBnPass, LeavesAConvWithAnotherUseAlone) {
  // The multi-consumer bug is exactly this shape: folding would remove it.
  Rng rng(22);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 1), MakeBn(rng, "bn", "c", "y", 2)},
                      {"y", "c"});
  EXPECT_EQ(CountTargets(*MakeFoldBnPass(), ReduceCase{g, RandInputs(rng, g)}), 0);
}

TEST(FoldPadPass, ZeroPadBecomesConvPadsOthersStay) {
  Rng rng(23);
  Graph g =
      MakeGraph({In("x", {1, 2, 5, 5})},
                {MakeNode(Op::Pad, "pad", {"x"}, "p", {{"pads", std::vector<int64_t>{1, 0, 2, 1}}}),
                 MakeConv(rng, "conv", "p", "y", 2, 3, 3, 1, true, 1)},
                {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeFoldPadPass();
  ASSERT_EQ(CountTargets(*pass, c), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 1u);
  EXPECT_EQ(AttrInts(r->graph.nodes[0], "pads"), (std::vector<int64_t>{2, 1, 3, 2}));
  ExpectSameValues(c, *r, "y", 1e-6);
  // A reflect Pad or a non-zero fill is not a conv's zero padding.
  c.graph.nodes[0].attrs["mode"] = std::string("reflect");
  EXPECT_EQ(CountTargets(*pass, c), 0);
  c.graph.nodes[0].attrs["mode"] = std::string("constant");
  c.graph.nodes[0].attrs["value"] = -1.0;
  EXPECT_EQ(CountTargets(*pass, c), 0);
}

TEST(ExposePass, AFinalNodeHandsOverAllItsOperands) {
  Rng rng(24);
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 1), MakeBn(rng, "bn", "c", "b", 2),
                       MakeNode(Op::Add, "add", {"b", "c"}, "y")},
                      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto pass = MakeExposePass();
  ASSERT_EQ(CountTargets(*pass, c), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 2u);
  EXPECT_EQ(r->graph.outputs, (std::vector<std::string>{"b", "c"}));
  EXPECT_LT(SizeOf(*r), SizeOf(c));
}

TEST(CanonicalOpsPass, LowersActivationsAndDropsEpilogueSteps) {
  Rng rng(25);
  Node fused = MakeConv(rng, "conv", "x", "c", 2, 2, 1);
  fused.op = Op::FusedConv;
  EpilogueStep sig;
  sig.act = Op::Sigmoid;
  EpilogueStep clamp;
  clamp.kind = EpilogueKind::kClamp;
  clamp.attrs = {{"min", -0.5}, {"max", 0.5}};
  fused.epilogue = {sig, clamp};
  Graph g =
      MakeGraph({In("x", {1, 2, 4, 4})}, {fused, MakeNode(Op::Relu6, "r6", {"c"}, "y")}, {"y"});
  ReduceCase c{g, RandInputs(rng, g, -8, 8)};
  auto pass = MakeCanonicalOpsPass();
  ASSERT_EQ(pass->modes(), 4);
  // Mode relu: the Sigmoid step, the clamp step and the Relu6 node.
  ASSERT_EQ(CountTargets(*pass, c, 0), 3);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 3);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(r->graph.nodes[0].epilogue[0].act, Op::Relu);
  EXPECT_EQ(r->graph.nodes[1].op, Op::Relu);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  // Mode clip: the Sigmoid step only (the clamp step is a Clip, the Relu6 node has its own mode).
  ASSERT_EQ(pass->mode_name(1), "clip");
  ASSERT_EQ(CountTargets(*pass, c, 1), 1);
  r = ApplyPass(*pass, c, 1, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(r->graph.nodes[0].epilogue[0].kind, EpilogueKind::kClamp);
  EXPECT_EQ(r->graph.nodes[1].op, Op::Relu6);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  {
    // A HardSwish node becomes a Clip that bites (not Clip(0, 6): 1 would pass through).
    Graph h =
        MakeGraph({In("x", {1, 2, 4, 4})}, {MakeNode(Op::HardSwish, "hs", {"x"}, "y")}, {"y"});
    ReduceCase hc{h, RandInputs(rng, h, -8, 8)};
    ASSERT_EQ(CountTargets(*pass, hc, 1), 1);
    std::optional<ReduceCase> hr = ApplyPass(*pass, hc, 1, 0, 1);
    ASSERT_TRUE(hr && IsValidCase(*hr));
    EXPECT_EQ(hr->graph.nodes[0].op, Op::Clip);
    EXPECT_EQ(AttrFloat(hr->graph.nodes[0], "max"), 0.5);
    EXPECT_LT(SizeOf(*hr), SizeOf(hc));
  }
  // Mode relu6-clip: the same function, a plainer op.
  ASSERT_EQ(CountTargets(*pass, c, 2), 1);
  r = ApplyPass(*pass, c, 2, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(r->graph.nodes[1].op, Op::Clip);
  ExpectSameValues(c, *r, "y", 0);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  // Mode drop-step: either step (an add step too: FusedConvAddStepGoesWithItsOperand).
  ASSERT_EQ(CountTargets(*pass, c, 3), 2);
  r = ApplyPass(*pass, c, 3, 1, 2);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes[0].epilogue.size(), 1u);
  EXPECT_EQ(r->graph.nodes[0].epilogue[0].act, Op::Sigmoid);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
}

TEST(CanonicalOpsPass, FusedConvAddStepGoesWithItsOperand) {
  Rng rng(27);
  Node fused = MakeConv(rng, "conv", "x", "y", 2, 2, 1);
  fused.op = Op::FusedConv;
  fused.inputs = {"x", "r", "s"};
  EpilogueStep add_r;
  add_r.kind = EpilogueKind::kAdd;
  add_r.input = 1;
  EpilogueStep clamp;
  clamp.kind = EpilogueKind::kClamp;
  clamp.attrs = {{"min", 0.0}, {"max", 6.0}};
  EpilogueStep add_s = add_r;
  add_s.input = 2;
  fused.epilogue = {add_r, clamp, add_s};
  Graph g = MakeGraph({In("x", {1, 2, 4, 4}), In("r", {1, 2, 4, 4}), In("s", {1, 2, 4, 4})},
                      {fused}, {"y"});
  ReduceCase c{g, RandInputs(rng, g, -8, 8)};
  auto pass = MakeCanonicalOpsPass();
  ASSERT_EQ(CountTargets(*pass, c, 3), 3);
  // The first add step: input r goes, s's step now reads input 1.
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 3, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  const Node& n = r->graph.nodes[0];
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "s"}));
  ASSERT_EQ(n.epilogue.size(), 2u);
  EXPECT_EQ(n.epilogue[1].input, 1);
  EXPECT_EQ(r->graph.inputs.size(), 2u);  // r is no graph input any more
  EXPECT_LT(SizeOf(*r), SizeOf(c));
}

// Through the engine: a property that needs a conv output with two uses below a BN (the
// multi-consumer bug's shape) and one that needs a Relu6 (its activation matters) keep them;
// everything they do not need goes.
TEST(CanonicalOpsPass, AQLinearConvsActivationBecomesReluClipOrGoesButNeverAFloatClamp) {
  // Q -> QLinearConv(+Relu6) -> DQ: the integer clamp may become Relu or go (both stay valid
  // QLinearConvs), never a clamp step (ir/verifier_quant.cc refuses one); the residual stays.
  Rng rng(31);
  const QuantParams px = PerTensor(QuantType::kUint8, 0.0625, 10);
  const QuantParams pw = PerTensor(QuantType::kInt8, 0.0078125, 0);
  const QuantParams py = PerTensor(QuantType::kUint8, 0.125, 0);
  Node q = MakeNode(Op::QuantizeLinear, "q", {"x"}, "xq");
  q.quant["y"] = px;
  Node conv = MakeConv(rng, "conv", "xq", "c", 2, 3, 1);
  conv.op = Op::QLinearConv;
  for (float& v : conv.params["W"].data) v = std::round(v * 60);
  for (float& v : conv.params["B"].data) v = std::round(v * 100);
  conv.quant = {{"x", px}, {"w", pw}, {"y", py}};
  EpilogueStep r6;
  r6.act = Op::Relu6;
  conv.epilogue = {r6};
  Node dq = MakeNode(Op::DequantizeLinear, "dq", {"c"}, "y");
  dq.quant["x"] = py;
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})}, {q, conv, dq}, {"y"});
  ReduceCase c{g, RandInputs(rng, g, -1, 1)};
  ASSERT_TRUE(IsValidCase(c));
  auto pass = MakeCanonicalOpsPass();
  ASSERT_EQ(CountTargets(*pass, c, 0), 1);
  std::optional<ReduceCase> r = ApplyPass(*pass, c, 0, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes[1].epilogue.size(), 1u);
  EXPECT_EQ(r->graph.nodes[1].epilogue[0].kind, EpilogueKind::kActivation);
  EXPECT_EQ(r->graph.nodes[1].epilogue[0].act, Op::Relu);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  EXPECT_EQ(CountTargets(*pass, c, 1), 0);  // clip: only Relu, Relu6 and Clip are here
  // relu6-clip: the Clip(0, 6) activation it is, the same integers.
  ASSERT_EQ(CountTargets(*pass, c, 2), 1);
  r = ApplyPass(*pass, c, 2, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_EQ(r->graph.nodes[1].epilogue[0].kind, EpilogueKind::kActivation);
  EXPECT_EQ(r->graph.nodes[1].epilogue[0].act, Op::Clip);
  ExpectSameValues(c, *r, "y", 0);
  EXPECT_EQ(CountTargets(*pass, *r, 2), 0);
  ASSERT_EQ(CountTargets(*pass, c, 3), 1);
  r = ApplyPass(*pass, c, 3, 0, 1);
  ASSERT_TRUE(r && IsValidCase(*r));
  EXPECT_TRUE(r->graph.nodes[1].epilogue.empty());
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  // A residual add alone is no site: it has its own grid and input.
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  add.input = 1;
  ReduceCase res = c;
  res.graph.nodes[1].epilogue = {add};
  res.graph.nodes[1].inputs.push_back("xq");
  res.graph.nodes[1].quant["r"] = px;
  for (int mode = 0; mode < 4; ++mode) EXPECT_EQ(CountTargets(*pass, res, mode), 0) << mode;
}

TEST(Reduce, OneFormPerPropertyKeepsWhatThePropertyNeeds) {
  Rng rng(26);
  Graph g = MakeGraph(
      {In("x", {1, 2, 4, 4})},
      {MakeConv(rng, "conv", "x", "c", 2, 2, 1), MakeBn(rng, "bn", "c", "b", 2),
       MakeNode(Op::Tanh, "t", {"b"}, "tb"), MakeNode(Op::Concat, "cat", {"tb", "c"}, "y")},
      {"y"});
  ReduceCase c{g, RandInputs(rng, g)};
  auto two_uses = [](const ReduceCase& k) {
    for (const Node& n : k.graph.nodes) {
      if (n.op != Op::BatchNorm) continue;
      const std::string& in = n.inputs[0];
      const int p = k.graph.ProducerIndex(in);
      const size_t uses =
          k.graph.Consumers(in).size() + (k.graph.IsGraphOutput(in) ? size_t{1} : size_t{0});
      if (p >= 0 && k.graph.nodes[size_t(p)].op == Op::Conv && uses >= 2) return true;
    }
    return false;
  };
  ReduceStats st;
  ReduceCase a = Reduce(c, DefaultReducePasses(), two_uses, {}, &st);
  ASSERT_EQ(a.graph.nodes.size(), 2u);
  EXPECT_EQ(a.graph.nodes[0].op, Op::Conv);
  EXPECT_EQ(a.graph.nodes[1].op, Op::BatchNorm);
  EXPECT_EQ(a.graph.outputs.size(), 2u);

  Graph h = MakeGraph({In("x", {1, 2, 4, 4})},
                      {MakeConv(rng, "conv", "x", "c", 2, 2, 1), MakeBn(rng, "bn", "c", "b", 2),
                       MakeNode(Op::Relu6, "r6", {"b"}, "y")},
                      {"y"});
  ReduceCase d{h, RandInputs(rng, h)};
  auto conv_then_relu6 = [](const ReduceCase& k) {
    return CountOp(k.graph, Op::Conv) == 1 && CountOp(k.graph, Op::Relu6) == 1;
  };
  ReduceCase b = Reduce(d, DefaultReducePasses(), conv_then_relu6, {}, &st);
  ASSERT_EQ(b.graph.nodes.size(), 2u);  // the BN folded into the conv
  EXPECT_EQ(b.graph.nodes[1].op, Op::Relu6);
}

}  // namespace
}  // namespace fusefuzz::testing
