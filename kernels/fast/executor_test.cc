// The executor end to end: a graph touching every family runs bit-identically with 1, 2 and 3
// threads and matches the reference.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::Random;

Node MakeNode(const std::string& name, Op op, std::vector<std::string> inputs, AttrMap attrs = {},
              ParamMap params = {}) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.output = name + "_out";
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

Graph EveryFamily() {
  Graph g;
  g.inputs = {{"x", {2, 3, 9, 11}}};
  const int64_t c = 8;
  g.nodes = {
      MakeNode("conv", Op::Conv, {"x"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
               {{"W", Random({c, 3, 3, 3}, 1)}, {"B", Random({c}, 2)}}),
      MakeNode("bn", Op::BatchNorm, {"conv_out"}, {},
               {{"scale", Random({c}, 3)},
                {"bias", Random({c}, 4)},
                {"mean", Random({c}, 5)},
                {"var", Random({c}, 6, 0.1f, 2.0f)}}),
      MakeNode("act", Op::Silu, {"bn_out"}),
      MakeNode("pool", Op::MaxPool, {"act_out"},
               {{"kernel_shape", std::vector<int64_t>{3, 3}},
                {"strides", std::vector<int64_t>{2, 2}},
                {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
      MakeNode("gn", Op::GroupNorm, {"pool_out"}, {{"num_groups", int64_t{2}}},
               {{"scale", Random({c}, 7)}, {"bias", Random({c}, 8)}}),
      MakeNode("dw", Op::FusedConv, {"gn_out", "pool_out"},
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", c}},
               {{"W", Random({c, 1, 3, 3}, 9)}}),
      MakeNode("pad", Op::Pad, {"dw_out"},
               {{"pads", std::vector<int64_t>{1, 2, 0, 1}}, {"mode", std::string("reflect")}}),
      MakeNode("mul", Op::Mul, {"pad_out"}, {}, {{"B", Random({1, c, 1, 1}, 10)}}),
      MakeNode("cat", Op::Concat, {"mul_out", "pad_out"}),
      MakeNode("avg", Op::AvgPool, {"cat_out"},
               {{"kernel_shape", std::vector<int64_t>{2, 2}},
                {"strides", std::vector<int64_t>{2, 2}},
                {"ceil_mode", int64_t{1}}}),
      MakeNode("gap", Op::GlobalAvgPool, {"avg_out"}),
  };
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  add.input = 1;
  EpilogueStep relu6;
  relu6.kind = EpilogueKind::kActivation;
  relu6.act = Op::Relu6;
  g.nodes[5].epilogue = {add, relu6};
  g.outputs = {"gap_out", "avg_out"};
  return g;
}

TEST(FastExecutor, EveryFamilyBitIdenticalAcrossThreadCounts) {
  const Graph g = EveryFamily();
  const TensorMap in = {{"x", Random({2, 3, 9, 11}, 11)}};
  const TensorMap one = CheckAgainstReference(g, in, "every family");
  for (int threads : {2, 3}) {
    const TensorMap many = RunFast(g, in, FastOptions{threads});
    for (const auto& [name, t] : one) {
      EXPECT_TRUE(t.BitwiseEquals(many.at(name))) << name << " threads " << threads;
    }
  }
}

}  // namespace
}  // namespace fusefuzz
