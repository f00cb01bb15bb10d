// Activations: hand values for each op (incl. NaN propagation), then the reference on inputs
// spanning small, moderate and large magnitudes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

Node ActNode(Op op, AttrMap attrs = {}, ParamMap params = {}) {
  Node n;
  n.name = "act";
  n.op = op;
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

std::vector<float> RunOne(const Node& n, const Tensor& x) {
  Graph g = OneNode(n, {x.shape});
  return RunFast(g, {{"x", x}}).at("out").data;
}

const Tensor kX = Values({1, 2, 1, 3}, {-3, -0.5, 0, 0.5, 2, 7});

TEST(FastActivation, HandValues) {
  EXPECT_EQ(RunOne(ActNode(Op::Relu), kX), (std::vector<float>{0, 0, 0, 0.5, 2, 7}));
  EXPECT_EQ(RunOne(ActNode(Op::Relu6), kX), (std::vector<float>{0, 0, 0, 0.5, 2, 6}));
  EXPECT_EQ(RunOne(ActNode(Op::Clip, {{"min", -1.0}, {"max", 1.0}}), kX),
            (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1}));
  EXPECT_EQ(RunOne(ActNode(Op::LeakyRelu, {{"alpha", 0.5}}), kX),
            (std::vector<float>{-1.5, -0.25, 0, 0.5, 2, 7}));
  EXPECT_EQ(RunOne(ActNode(Op::PRelu, {}, {{"slope", Values({2, 1, 1}, {0.5, 2})}}), kX),
            (std::vector<float>{-1.5, -0.25, 0, 0.5, 2, 7}));
  // A [3] slope runs along W (ONNX broadcasting), not along the channels.
  EXPECT_EQ(RunOne(ActNode(Op::PRelu, {}, {{"slope", Values({3}, {0.5, 2, 4})}}), kX),
            (std::vector<float>{-1.5, -1, 0, 0.5, 2, 7}));
  EXPECT_EQ(RunOne(ActNode(Op::HardSigmoid, {{"alpha", 0.25}, {"beta", 0.5}}), kX),
            (std::vector<float>{0, 0.375, 0.5, 0.625, 1, 1}));
  EXPECT_EQ(RunOne(ActNode(Op::HardSwish), kX),
            (std::vector<float>{0, -0.5f * (-0.5f / 6 + 0.5f), 0, 0.5f * (0.5f / 6 + 0.5f),
                                2 * (2.0f / 6 + 0.5f), 7}));
  auto near = [](std::vector<float> got, std::vector<double> want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  };
  near(RunOne(ActNode(Op::Sigmoid), kX),
       {0.0474258731775668, 0.3775406687981454, 0.5, 0.6224593312018546, 0.8807970779778823,
        0.9990889488055994});
  near(RunOne(ActNode(Op::Elu, {{"alpha", 2.0}}), kX),
       {2 * (std::exp(-3.0) - 1), 2 * (std::exp(-0.5) - 1), 0, 0.5, 2, 7});
  near(RunOne(ActNode(Op::Tanh), kX),
       {std::tanh(-3.0), std::tanh(-0.5), 0, std::tanh(0.5), std::tanh(2.0), std::tanh(7.0)});
  near(RunOne(ActNode(Op::Silu), kX),
       {-3 * 0.0474258731775668, -0.5 * 0.3775406687981454, 0, 0.5 * 0.6224593312018546,
        2 * 0.8807970779778823, 7 * 0.9990889488055994});
  near(RunOne(ActNode(Op::Gelu), kX),
       {-0.00404969409489, -0.154268769363, 0, 0.345731230637, 1.954499736, 7.0});
  near(RunOne(ActNode(Op::Gelu, {{"approximate", std::string("tanh")}}), kX),
       {-0.0036373920817, -0.154285990175, 0, 0.345714009825, 1.954597694, 7.0});
}

TEST(FastActivation, NanPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Values({1, 1, 1, 2}, {nan, 1});
  for (Op op : {Op::Relu, Op::Relu6, Op::LeakyRelu, Op::Sigmoid, Op::Tanh, Op::HardSwish}) {
    EXPECT_TRUE(std::isnan(RunOne(ActNode(op), x)[0])) << OpName(op);
  }
  EXPECT_TRUE(std::isnan(RunOne(ActNode(Op::Clip, {{"min", 0.0}, {"max", 1.0}}), x)[0]));
  EXPECT_TRUE(std::isnan(RunOne(ActNode(Op::Clip, {{"min", 1.0}, {"max", 0.0}}), x)[0]));
}

TEST(FastActivation, ClipMinAboveMaxIsMaxEverywhere) {
  EXPECT_EQ(RunOne(ActNode(Op::Clip, {{"min", 1.0}, {"max", -1.0}}), kX),
            (std::vector<float>{-1, -1, -1, -1, -1, -1}));
}

TEST(FastActivation, MatchesReference) {
  const std::vector<std::pair<Node, std::string>> nodes = {
      {ActNode(Op::Relu), "relu"},
      {ActNode(Op::Relu6), "relu6"},
      {ActNode(Op::Clip, {{"min", -2.5}, {"max", 1.5}}), "clip"},
      {ActNode(Op::LeakyRelu, {{"alpha", 0.01}}), "leaky"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({5, 1, 1}, 9)}}), "prelu"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({1}, 9)}}), "prelu_scalar"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({7}, 9)}}), "prelu_w"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({3, 7}, 9)}}), "prelu_hw"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({5, 3, 7}, 9)}}), "prelu_chw"},
      {ActNode(Op::PRelu, {}, {{"slope", Random({2, 1, 3, 1}, 9)}}), "prelu_nh"},
      {ActNode(Op::Elu), "elu"},
      {ActNode(Op::Sigmoid), "sigmoid"},
      {ActNode(Op::HardSigmoid), "hardsigmoid"},
      {ActNode(Op::Tanh), "tanh"},
      {ActNode(Op::Silu), "silu"},
      {ActNode(Op::HardSwish), "hardswish"},
      {ActNode(Op::Gelu), "gelu"},
      {ActNode(Op::Gelu, {{"approximate", std::string("tanh")}}), "gelu_tanh"},
  };
  uint64_t seed = 40;
  for (const auto& [node, name] : nodes) {
    for (float range : {1e-3f, 4.0f, 30.0f}) {
      Graph g = OneNode(node, {{2, 5, 3, 7}});
      TensorMap in = {{"x", Random({2, 5, 3, 7}, seed++, -range, range)}};
      CheckAgainstReference(g, in, name + " range " + std::to_string(range));
      CheckAgainstReference(g, in, name + " 2 threads", 2);
    }
  }
}

TEST(FastActivation, Rank2PreluUsesChannels) {
  Node n = ActNode(Op::PRelu, {}, {{"slope", Values({3}, {1, 2, 3})}});
  EXPECT_EQ(RunOne(n, Values({2, 3}, {-1, -1, -1, -2, 1, -2})),
            (std::vector<float>{-1, -2, -3, -2, 1, -6}));
}

}  // namespace
}  // namespace fusefuzz
