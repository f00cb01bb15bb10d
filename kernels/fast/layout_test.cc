// Pad (constant / reflect), Concat, Identity, and the executor's input checks.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

Node PadNode(std::vector<int64_t> pads, std::string mode, double value = 0) {
  Node n;
  n.name = "pad";
  n.op = Op::Pad;
  n.attrs = {{"pads", std::move(pads)}, {"mode", std::move(mode)}, {"value", value}};
  return n;
}

TEST(FastPad, ConstantAndReflect) {
  const Tensor x = Values({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = [&](const Node& n) { return RunFast(OneNode(n, {x.shape}), {{"x", x}}).at("out"); };
  Tensor c = run(PadNode({1, 0, 0, 1}, "constant", 9));
  EXPECT_EQ(c.shape, (Shape{1, 1, 3, 4}));
  EXPECT_EQ(c.data, (std::vector<float>{9, 9, 9, 9, 1, 2, 3, 9, 4, 5, 6, 9}));
  Tensor r = run(PadNode({1, 2, 0, 1}, "reflect"));
  EXPECT_EQ(r.shape, (Shape{1, 1, 3, 6}));
  // Rows: reflect of row -1 is row 1; columns -2,-1 -> 2,1 and 3 -> 1.
  EXPECT_EQ(r.data, (std::vector<float>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
}

TEST(FastPad, MatchesReference) {
  Graph g = OneNode(PadNode({2, 1, 3, 4}, "reflect"), {{2, 3, 5, 6}});
  CheckAgainstReference(g, {{"x", Random({2, 3, 5, 6}, 1)}}, "reflect");
  Graph c = OneNode(PadNode({0, 3, 1, 0}, "constant", -1.5), {{2, 3, 5, 6}});
  CheckAgainstReference(c, {{"x", Random({2, 3, 5, 6}, 2)}}, "constant");
}

TEST(FastConcat, Channels) {
  Node n;
  n.name = "cat";
  n.op = Op::Concat;
  Graph g = OneNode(n, {{2, 1, 1, 2}, {2, 2, 1, 2}});
  Tensor out = RunFast(g, {{"x", Values({2, 1, 1, 2}, {1, 2, 3, 4})},
                           {"y", Values({2, 2, 1, 2}, {5, 6, 7, 8, 9, 10, 11, 12})}})
                   .at("out");
  EXPECT_EQ(out.shape, (Shape{2, 3, 1, 2}));
  EXPECT_EQ(out.data, (std::vector<float>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12}));
}

TEST(FastExecutor, ChecksInputs) {
  Node n;
  n.name = "id";
  n.op = Op::Identity;
  Graph g = OneNode(n, {{1, 2}});
  EXPECT_THROW(RunFast(g, {}), InputError);
  EXPECT_THROW(RunFast(g, {{"x", Values({2, 1}, {1, 2})}}), InputError);
  EXPECT_THROW(RunFast(g, {{"x", Values({1, 2}, {1, 2})}}, FastOptions{-1}), InputError);
  EXPECT_EQ(RunFast(g, {{"x", Values({1, 2}, {1, 2})}}).at("out").data, (std::vector<float>{1, 2}));
}

TEST(FastExecutor, MultiNodeGraphKeepsValuesThatAreAlsoOutputs) {
  // x -> relu -> a (output) -> neg = 0 - a -> b (output); a is consumed and also an output.
  Graph g;
  g.inputs = {{"x", {1, 3}}};
  Node relu;
  relu.name = "relu";
  relu.op = Op::Relu;
  relu.inputs = {"x"};
  relu.output = "a";
  Node neg;
  neg.name = "neg";
  neg.op = Op::Sub;
  neg.inputs = {"a"};
  neg.params["A"] = Values({1}, {0});
  neg.output = "b";
  g.nodes = {relu, neg};
  g.outputs = {"b", "a"};
  TensorMap out = RunFast(g, {{"x", Values({1, 3}, {-1, 2, 3})}});
  EXPECT_EQ(out.at("a").data, (std::vector<float>{0, 2, 3}));
  EXPECT_EQ(out.at("b").data, (std::vector<float>{0, -2, -3}));
}

}  // namespace
}  // namespace fusefuzz
