#include <gtest/gtest.h>

#include "optimizer/rules/activation_cases.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

constexpr char kRule[] = "pool-activation-reorder";

Graph ActPool(Node act, int64_t k = 3, int64_t stride = 2, int64_t pad = 1) {
  Node pool = MakeNode(Op::MaxPool, "pool", {"a"}, "y",
                       {{"kernel_shape", std::vector<int64_t>{k, k}},
                        {"strides", std::vector<int64_t>{stride, stride}},
                        {"pads", std::vector<int64_t>{pad, pad, pad, pad}}});
  return MakeGraph({In("x", {1, 3, 7, 7})}, {std::move(act), pool}, {"y"});
}

bool MonotoneCase(const Node& act) {
  switch (act.op) {
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
      return false;
    case Op::PRelu:
      for (float s : act.params.at("slope").data) {
        if (s < 0) return false;
      }
      return true;
    default:
      return true;
  }
}

TEST(PoolActivationReorder, MonotoneActivationsMoveAfterThePool) {
  Rng rng(1);
  int fired = 0, refused = 0;
  for (Node act : AllActivations(rng, "x", "a", 3)) {
    act.inputs = {"x"};
    Graph g = ActPool(act);
    if (!MonotoneCase(act)) {
      ExpectNoFire(g, kRule);
      ++refused;
      continue;
    }
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ASSERT_EQ(r.graph.nodes.size(), 2u);
    EXPECT_EQ(r.graph.nodes[0].op, Op::MaxPool);
    EXPECT_EQ(r.graph.nodes[1].op, act.op);
    EXPECT_EQ(r.graph.nodes[1].output, "y");
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), std::string(OpName(act.op)));
    ++fired;
  }
  EXPECT_GE(fired, 9);
  EXPECT_GE(refused, 4);  // Silu, HardSwish, Gelu x2 (+ PRelu with a negative slope)
}

TEST(PoolActivationReorder, NumericAgreementRandom) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed * 41 + 5);
    std::vector<Node> acts;
    for (Node& a : AllActivations(rng, "x", "a", 3)) {
      if (MonotoneCase(a)) acts.push_back(a);
    }
    Node act = acts[static_cast<size_t>(rng.Int(0, int64_t(acts.size()) - 1))];
    const int64_t k = rng.Int(1, 3);
    Graph g = ActPool(act, k, rng.Int(1, 2), rng.Int(0, k - 1));
    OptimizeResult r = ExpectFiresOnce(g, kRule);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "seed " + std::to_string(seed));
  }
}

TEST(PoolActivationReorder, RefusesNegativeLeakyReluAlpha) {
  ExpectNoFire(ActPool(MakeNode(Op::LeakyRelu, "act", {"x"}, "a", {{"alpha", -0.5}})), kRule);
}

TEST(PoolActivationReorder, RefusesNegativeHardSigmoidAlpha) {
  ExpectNoFire(ActPool(MakeNode(Op::HardSigmoid, "act", {"x"}, "a", {{"alpha", -0.2}})), kRule);
}

TEST(PoolActivationReorder, RefusesNegativeEluAlpha) {
  ExpectNoFire(ActPool(MakeNode(Op::Elu, "act", {"x"}, "a", {{"alpha", -1.0}})), kRule);
}

TEST(PoolActivationReorder, RefusesPReluWithANegativeSlope) {
  ExpectNoFire(ActPool(MakeNode(Op::PRelu, "act", {"x"}, "a", {},
                                {{"slope", Tensor({3, 1, 1}, {0.1f, -0.1f, 0.2f})}})),
               kRule);
}

// MaxPool changes H and W: a slope along them ([7] is W, [7, 7] is H, W) would no longer line
// up after the swap, even when every slope is >= 0.
TEST(PoolActivationReorder, RefusesPReluSlopeAlongHOrW) {
  for (const Shape& s : std::vector<Shape>{{7}, {7, 7}, {3, 7, 7}, {7, 1}}) {
    ExpectNoFire(ActPool(MakeNode(Op::PRelu, "act", {"x"}, "a", {}, {{"slope", Tensor(s, 0.5f)}})),
                 kRule);
  }
  ExpectFiresOnce(
      ActPool(MakeNode(Op::PRelu, "act", {"x"}, "a", {}, {{"slope", Tensor({1, 3, 1, 1}, 0.5f)}})),
      kRule);
}

TEST(PoolActivationReorder, RefusesAvgPool) {
  Graph g = ActPool(MakeNode(Op::Relu, "act", {"x"}, "a"));
  g.nodes[1].op = Op::AvgPool;
  ExpectNoFire(g, kRule);
}

TEST(PoolActivationReorder, RefusesWhenActivationOutputHasAnotherConsumer) {
  Graph g = ActPool(MakeNode(Op::Relu, "act", {"x"}, "a"));
  g.nodes.push_back(MakeNode(Op::Tanh, "t", {"a"}, "z"));
  g.outputs.push_back("z");
  ExpectNoFire(g, kRule);
}

TEST(PoolActivationReorder, RefusesWhenActivationOutputIsGraphOutput) {
  Graph g = ActPool(MakeNode(Op::Relu, "act", {"x"}, "a"));
  g.outputs.push_back("a");
  ExpectNoFire(g, kRule);
}

TEST(PoolActivationReorder, DefaultPipelineDoesNotOscillate) {
  Graph g = ActPool(MakeNode(Op::Relu, "act", {"x"}, "a"));
  OptimizeResult r = Optimize(g);
  EXPECT_TRUE(r.reached_fixed_point);
  EXPECT_EQ(r.rewrites.size(), 1u);
  EXPECT_EQ(r.iterations, 2);
}

}  // namespace
}  // namespace fusefuzz::testing
