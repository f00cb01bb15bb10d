// The executor end to end: a graph touching every family runs bit-identically with 1, 2 and 3
// threads and matches the reference.
#include <gtest/gtest.h>

#include <cmath>

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
  CheckAgainstReference(g, in, "every family");
  for (FastIsa isa : AvailableFastIsas()) {
    const TensorMap one = RunFast(g, in, FastOptions{1, isa});
    for (int threads : {2, 3}) {
      const TensorMap many = RunFast(g, in, FastOptions{threads, isa});
      for (const auto& [name, t] : one) {
        EXPECT_TRUE(t.BitwiseEquals(many.at(name)))
            << name << " threads " << threads << " isa " << FastIsaName(isa);
      }
    }
  }
}

// The tensor pool hands out dirty buffers: outputs must not depend on what ran before. Runs the
// graph cold, then after other graphs left buffers of every size behind (filled with NaN by a
// graph whose every value is NaN), and twice in a row.
TEST(FastExecutor, PooledBuffersDoNotLeakBetweenNodesOrRuns) {
  const Graph g = EveryFamily();
  const TensorMap in = {{"x", Random({2, 3, 9, 11}, 11)}};
  const TensorMap cold = RunFast(g, in);
  TensorMap nan_in = in;
  for (float& v : nan_in["x"].data) v = std::nanf("");
  const TensorMap dirty = RunFast(g, nan_in);  // leaves NaN-filled buffers in the pool
  for (const auto& [name, t] : dirty) {
    for (float v : t.data) ASSERT_TRUE(std::isnan(v)) << name;
  }
  for (int run = 0; run < 2; ++run) {
    const TensorMap warm = RunFast(g, in);
    for (const auto& [name, t] : cold) {
      EXPECT_TRUE(t.BitwiseEquals(warm.at(name))) << name << " run " << run;
    }
  }
}

TEST(FastExecutor, IsaLevels) {
  const std::vector<FastIsa> levels = AvailableFastIsas();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), FastIsa::kSse2);
  EXPECT_TRUE(FastIsaAvailable(DefaultFastIsa()));
  for (FastIsa isa : levels) EXPECT_EQ(ParseFastIsa(FastIsaName(isa), "test"), isa);
  EXPECT_THROW(ParseFastIsa("avx3", "test"), InputError);
  // A level the build or CPU lacks is refused with an error, never run.
  for (FastIsa isa : {FastIsa::kAvx2, FastIsa::kAvx512}) {
    if (FastIsaAvailable(isa)) continue;
    const Graph g = EveryFamily();
    const TensorMap in = {{"x", Random({2, 3, 9, 11}, 11)}};
    EXPECT_THROW(RunFast(g, in, FastOptions{1, isa}), InputError) << FastIsaName(isa);
  }
  EXPECT_NE(FastIsaSummary().find(FastIsaName(DefaultFastIsa())), std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
