#include <gtest/gtest.h>

#include "ir/quant.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"
#include "optimizer/test_util.h"
#include "reduce/reduce.h"

namespace fusefuzz::testing {
namespace {

// x -> Q(per axis, u8) -> DQ(same) = "y".
ReduceCase QdqCase() {
  QuantParams p;
  p.type = QuantType::kUint8;
  p.scale = {0.3f, 0.05f};
  p.zero_point = {7, 128};
  p.axis = 1;
  Node q = MakeNode(Op::QuantizeLinear, "q", {"x"}, "xq");
  q.quant["y"] = p;
  Node dq = MakeNode(Op::DequantizeLinear, "dq", {"xq"}, "y");
  dq.quant["x"] = p;
  Graph g = MakeGraph({In("x", {1, 2, 2, 2})}, {q, dq}, {"y"});
  Rng rng(3);
  return ReduceCase{g, RandInputs(rng, g)};
}

std::optional<ReduceCase> RunPass(const ReducePass& p, const ReduceCase& c, int mode) {
  ReduceContext ctx(c);
  const int64_t n = p.Targets(ctx, mode);
  if (n == 0) return std::nullopt;
  return p.Apply(ctx, mode, 0, n);
}

TEST(QuantCutPass, AQLinearAddBecomesTheQuantizeLinearOfItsValues) {
  // x -> Q -> QLinearAdd(xq, xq) -> DQ = "y": the QLinearAdd becomes Q(new input), same y.
  QuantParams p = PerTensor(QuantType::kUint8, 0.0625, 100);
  QuantParams out = PerTensor(QuantType::kUint8, 0.125, 3);
  Node q = MakeNode(Op::QuantizeLinear, "q", {"x"}, "xq");
  q.quant["y"] = p;
  Node add = MakeNode(Op::QLinearAdd, "add", {"xq", "xq"}, "s");
  add.quant["a"] = p;
  add.quant["b"] = p;
  add.quant["y"] = out;
  Node dq = MakeNode(Op::DequantizeLinear, "dq", {"s"}, "y");
  dq.quant["x"] = out;
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})}, {q, add, dq}, {"y"});
  Rng rng(5);
  ReduceCase c{g, RandInputs(rng, g, -6, 6)};
  auto pass = MakeQuantCutPass();
  std::optional<ReduceCase> r = RunPass(*pass, c, 0);
  ASSERT_TRUE(r);
  RemoveDeadCode(*r);
  ASSERT_TRUE(IsValidCase(*r));
  ASSERT_EQ(r->graph.nodes.size(), 2u);  // the first Q died with the add
  EXPECT_EQ(r->graph.nodes[0].op, Op::QuantizeLinear);
  EXPECT_EQ(r->graph.nodes[0].output, "s");
  EXPECT_EQ(r->graph.nodes[0].quant.at("y"), out);
  EXPECT_LT(SizeOf(*r), SizeOf(c));
  // The same integers (no exact ties among these inputs), so the same output.
  const RefTensor before = RunReference(g, c.inputs).at("y");
  const RefTensor after = RunReference(r->graph, r->inputs).at("y");
  ASSERT_EQ(before.value.size(), after.value.size());
  for (size_t i = 0; i < before.value.size(); ++i) EXPECT_EQ(after.value[i], before.value[i]);
  // Nothing left to cut.
  EXPECT_EQ(pass->Targets(*std::make_unique<ReduceContext>(*r), 0), 0);
  // Mode dequantize: only a QLinear op that ends the graph; this one feeds a DQ.
  EXPECT_EQ(pass->Targets(*std::make_unique<ReduceContext>(c), 1), 0);
  Graph end = MakeGraph({In("x", {1, 2, 3, 3})}, {q, add}, {"s"});
  ReduceCase e{end, c.inputs};
  std::optional<ReduceCase> d = RunPass(*pass, e, 1);
  ASSERT_TRUE(d);
  RemoveDeadCode(*d);
  ASSERT_TRUE(IsValidCase(*d));
  EXPECT_EQ(d->graph.nodes.back().op, Op::DequantizeLinear);
  EXPECT_EQ(d->graph.nodes.back().quant.at("x"), p);
  EXPECT_LT(SizeOf(*d), SizeOf(e));
}

TEST(QuantCutPass, TheGraphsBoundaryConversionsGo) {
  // x -> Q -> DQ -> Relu -> Q -> DQ = "y". integer-input: the first Q goes and its integers are
  // the graph input; integer-output: the last DQ goes and the Q's integers are the output.
  QuantParams p = PerTensor(QuantType::kUint8, 0.0625, 100);
  QuantParams out = PerTensor(QuantType::kInt8, 0.125, -3);
  Node q = MakeNode(Op::QuantizeLinear, "q", {"x"}, "xq");
  q.quant["y"] = p;
  Node dq = MakeNode(Op::DequantizeLinear, "dq", {"xq"}, "xf");
  dq.quant["x"] = p;
  Node relu = MakeNode(Op::Relu, "relu", {"xf"}, "r");
  Node q2 = MakeNode(Op::QuantizeLinear, "q2", {"r"}, "rq");
  q2.quant["y"] = out;
  Node dq2 = MakeNode(Op::DequantizeLinear, "dq2", {"rq"}, "y");
  dq2.quant["x"] = out;
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})}, {q, dq, relu, q2, dq2}, {"y"});
  Rng rng(6);
  ReduceCase c{g, RandInputs(rng, g, -6, 6)};
  const RefTensorMap before = RunReference(g, c.inputs, /*all_values=*/true);
  auto pass = MakeQuantCutPass();
  ASSERT_EQ(pass->mode_name(2), "integer-input");
  ASSERT_EQ(pass->mode_name(3), "integer-output");

  std::optional<ReduceCase> in = RunPass(*pass, c, 2);
  ASSERT_TRUE(in);
  ASSERT_TRUE(IsValidCase(*in));
  EXPECT_LT(SizeOf(*in), SizeOf(c));
  ASSERT_EQ(in->graph.inputs.size(), 1u);
  EXPECT_EQ(in->graph.inputs[0].name, "xq");
  EXPECT_EQ(in->graph.nodes.front().op, Op::DequantizeLinear);
  const RefTensor y_in = RunReference(in->graph, in->inputs).at("y");
  ASSERT_EQ(y_in.value.size(), before.at("y").value.size());
  for (size_t i = 0; i < y_in.value.size(); ++i) EXPECT_EQ(y_in.value[i], before.at("y").value[i]);
  EXPECT_EQ(pass->Targets(*std::make_unique<ReduceContext>(*in), 2), 0);

  std::optional<ReduceCase> o = RunPass(*pass, c, 3);
  ASSERT_TRUE(o);
  ASSERT_TRUE(IsValidCase(*o));
  EXPECT_LT(SizeOf(*o), SizeOf(c));
  EXPECT_EQ(o->graph.outputs, std::vector<std::string>{"rq"});
  EXPECT_EQ(o->graph.nodes.back().op, Op::QuantizeLinear);
  const RefTensor rq = RunReference(o->graph, o->inputs).at("rq");
  for (size_t i = 0; i < rq.value.size(); ++i) EXPECT_EQ(rq.value[i], before.at("rq").value[i]);
  // The DQ of a graph input is all there is to such a graph: it stays.
  Graph only_dq = MakeGraph({In("xq", {1, 2, 3, 3})}, {dq}, {"xf"});
  ReduceCase d{only_dq, {{"xq", in->inputs.at("xq")}}};
  EXPECT_EQ(pass->Targets(*std::make_unique<ReduceContext>(d), 3), 0);
}

TEST(QuantParamsPass, EachModeSimplifiesAndShrinksTheCase) {
  auto pass = MakeQuantParamsPass();
  ASSERT_EQ(pass->modes(), 4);
  const ReduceCase c = QdqCase();
  VerifyGraph(c.graph);
  for (int mode = 0; mode < 4; ++mode) {
    std::optional<ReduceCase> r = RunPass(*pass, c, mode);
    ASSERT_TRUE(r) << pass->mode_name(mode);
    VerifyGraph(r->graph);
    EXPECT_LT(SizeOf(*r), SizeOf(c)) << pass->mode_name(mode);
    const QuantParams& y = r->graph.nodes[0].quant.at("y");
    switch (mode) {
      case 0:
        EXPECT_FALSE(y.PerAxis());
        EXPECT_EQ(y.scale, std::vector<double>{double(0.3f)});
        break;
      case 1:
      case 2:  // uint8: qmin is 0
        EXPECT_EQ(y.zero_point, (std::vector<int64_t>{0, 0}));
        break;
      case 3:
        EXPECT_EQ(y.scale, (std::vector<double>{0.25, 0.0625}));
        break;
    }
  }
}

TEST(QuantParamsPass, NothingToDoOnTheSimplestParameters) {
  ReduceCase c = QdqCase();
  for (Node& n : c.graph.nodes) {
    for (auto& [role, q] : n.quant) q = PerTensor(QuantType::kUint8, 0.5, 0);
  }
  auto pass = MakeQuantParamsPass();
  for (int mode = 0; mode < 4; ++mode) {
    ReduceContext ctx(c);
    EXPECT_EQ(pass->Targets(ctx, mode), 0) << pass->mode_name(mode);
  }
}

}  // namespace
}  // namespace fusefuzz::testing
