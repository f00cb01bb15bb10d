// Normalizations: hand values (eps inside the sqrt, biased variance, LayerNorm over [axis, rank))
// and the reference on odd sizes, including data with a large mean (cancellation).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

Node NormNode(Op op, const Shape& param_shape, uint64_t seed, AttrMap attrs = {}) {
  Node n;
  n.name = "norm";
  n.op = op;
  n.attrs = std::move(attrs);
  n.params["scale"] = Random(param_shape, seed, 0.5f, 2.0f);
  n.params["bias"] = Random(param_shape, seed + 1);
  if (op == Op::BatchNorm) {
    n.params["mean"] = Random(param_shape, seed + 2);
    n.params["var"] = Random(param_shape, seed + 3, 0.0f, 3.0f);
  }
  return n;
}

std::vector<float> RunOne(const Node& n, const Tensor& x) {
  return RunFast(OneNode(n, {x.shape}), {{"x", x}}).at("out").data;
}

TEST(FastNorm, BatchNormHandValues) {
  Node n = NormNode(Op::BatchNorm, {2}, 1, {{"epsilon", 1.0}});
  n.params["scale"] = Values({2}, {2, 1});
  n.params["bias"] = Values({2}, {1, -1});
  n.params["mean"] = Values({2}, {1, 0});
  n.params["var"] = Values({2}, {3, 0});
  // channel 0: (x - 1) / sqrt(3 + 1) * 2 + 1 = x; channel 1: x / sqrt(0 + 1) - 1.
  EXPECT_EQ(RunOne(n, Values({1, 2, 1, 2}, {5, -3, 5, -3})), (std::vector<float>{5, -3, 4, -4}));
}

TEST(FastNorm, InstanceNormUsesBiasedVariance) {
  Node n = NormNode(Op::InstanceNorm, {1}, 1, {{"epsilon", 0.0}});
  n.params["scale"] = Values({1}, {1});
  n.params["bias"] = Values({1}, {0});
  // mean 2, biased variance ((1)^2 + (1)^2) / 2 = 1 -> (x - 2) / 1.
  EXPECT_EQ(RunOne(n, Values({1, 1, 1, 2}, {1, 3})), (std::vector<float>{-1, 1}));
}

TEST(FastNorm, GroupNormPoolsChannelsOfAGroup) {
  Node n = NormNode(Op::GroupNorm, {2}, 1, {{"num_groups", int64_t{1}}, {"epsilon", 0.0}});
  n.params["scale"] = Values({2}, {1, 2});
  n.params["bias"] = Values({2}, {0, 10});
  // One group over both channels {1, 3}: mean 2, var 1.
  EXPECT_EQ(RunOne(n, Values({1, 2, 1, 1}, {1, 3})), (std::vector<float>{-1, 12}));
}

TEST(FastNorm, LayerNormAxis) {
  Node n = NormNode(Op::LayerNorm, {2}, 1, {{"axis", int64_t{-1}}, {"epsilon", 0.0}});
  n.params["scale"] = Values({2}, {1, 1});
  n.params["bias"] = Values({2}, {0, 0});
  EXPECT_EQ(RunOne(n, Values({2, 2}, {0, 2, 5, 1})), (std::vector<float>{-1, 1, 1, -1}));
}

TEST(FastNorm, MatchesReference) {
  uint64_t seed = 70;
  const Shape x = {2, 6, 5, 7};
  std::vector<std::pair<Node, std::string>> cases = {
      {NormNode(Op::BatchNorm, {6}, seed), "bn"},
      {NormNode(Op::InstanceNorm, {6}, seed), "in"},
      {NormNode(Op::GroupNorm, {6}, seed, {{"num_groups", int64_t{3}}}), "gn3"},
      {NormNode(Op::GroupNorm, {6}, seed, {{"num_groups", int64_t{6}}}), "gn6"},
      {NormNode(Op::LayerNorm, {6, 5, 7}, seed), "ln1"},
      {NormNode(Op::LayerNorm, {5, 7}, seed, {{"axis", int64_t{2}}}), "ln2"},
      {NormNode(Op::LayerNorm, {7}, seed, {{"axis", int64_t{-1}}}), "ln-1"},
      {NormNode(Op::LayerNorm, {2, 6, 5, 7}, seed, {{"axis", int64_t{0}}}), "ln0"},
  };
  for (auto& [node, name] : cases) {
    Graph g = OneNode(node, {x});
    for (float offset : {0.0f, 50.0f}) {
      TensorMap in = {{"x", Random(x, seed++, offset - 1, offset + 1)}};
      CheckAgainstReference(g, in, name + " offset " + std::to_string(offset));
      CheckAgainstReference(g, in, name + " 2 threads", 2);
    }
  }
  // A rank-2 BatchNorm ([N, C]) and a long LayerNorm row (pairwise sums over 1000+ values).
  Graph bn2 = OneNode(NormNode(Op::BatchNorm, {5}, seed), {{3, 5}});
  CheckAgainstReference(bn2, {{"x", Random({3, 5}, seed + 1)}}, "bn rank 2");
  Graph ln = OneNode(NormNode(Op::LayerNorm, {37, 41}, seed), {{1, 3, 37, 41}});
  ln.nodes[0].attrs["axis"] = int64_t{2};
  CheckAgainstReference(ln, {{"x", Random({1, 3, 37, 41}, seed + 2)}}, "ln long");
}

}  // namespace
}  // namespace fusefuzz
