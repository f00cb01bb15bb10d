// gemm-bn-fold, gemm-activation-fuse and matmul-add-fuse: each fires where it is legal and agrees
// numerically, and refuses what must not fuse (another consumer, a graph output, an epilogue in
// between, a bias that is not a per-output vector, a MatMul of rank > 2).
#include <gtest/gtest.h>

#include "optimizer/rules/activation_cases.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// Gemm x [m, k] -> out, B [k, n] (or [n, k] with trans_b), optional bias C of shape `c`.
Node MakeGemm(Rng& rng, std::string in, std::string out, int64_t k, int64_t n, bool trans_b,
              Shape c = {}, AttrMap extra = {}) {
  ParamMap p = {{"B", RandTensor(rng, trans_b ? Shape{n, k} : Shape{k, n})}};
  if (!c.empty()) p["C"] = RandTensor(rng, c);
  AttrMap a = std::move(extra);
  if (trans_b) a["transB"] = int64_t{1};
  return MakeNode(Op::Gemm, "gemm", {std::move(in)}, std::move(out), std::move(a), p);
}

TEST(GemmBnFold, FoldsEveryLayoutAndBiasShape) {
  Rng rng(1);
  const int64_t m = 3, k = 7, n = 4;
  for (bool tb : {false, true}) {
    for (Shape c : {Shape{}, Shape{1}, Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n}}) {
      for (bool alpha_beta : {false, true}) {
        AttrMap extra;
        if (alpha_beta) extra = {{"alpha", -0.5}, {"beta", 2.0}, {"transA", int64_t{1}}};
        Graph g = MakeGraph(
            {In("x", alpha_beta ? Shape{k, m} : Shape{m, k})},
            {MakeGemm(rng, "x", "y", k, n, tb, c, extra), MakeBn(rng, "bn", "y", "z", n)}, {"z"});
        OptimizeResult r = ExpectFiresOnce(g, "gemm-bn-fold");
        ASSERT_EQ(r.graph.nodes.size(), 1u);
        EXPECT_EQ(r.graph.nodes[0].op, Op::Gemm);
        ExpectNumericAgreement(g, r.graph, RandInputs(rng, g),
                               "transB " + std::to_string(tb) + " C " + ShapeToString(c));
      }
    }
  }
}

TEST(GemmBnFold, RefusesWhatMustNotFold) {
  Rng rng(2);
  // An activation epilogue between the product and the BN.
  Node fused = MakeGemm(rng, "x", "y", 5, 3, false, {3});
  fused.epilogue = {EpilogueStep{}};
  ExpectNoFire(MakeGraph({In("x", {2, 5})}, {fused, MakeBn(rng, "bn", "y", "z", 3)}, {"z"}),
               "gemm-bn-fold");
  // The Gemm output has another consumer / is a graph output.
  Graph two = MakeGraph({In("x", {2, 5})},
                        {MakeGemm(rng, "x", "y", 5, 3, true), MakeBn(rng, "bn", "y", "z", 3),
                         MakeNode(Op::Relu, "r", {"y"}, "w")},
                        {"z", "w"});
  ExpectNoFire(two, "gemm-bn-fold");
  Graph out =
      MakeGraph({In("x", {2, 5})},
                {MakeGemm(rng, "x", "y", 5, 3, true), MakeBn(rng, "bn", "y", "z", 3)}, {"z", "y"});
  ExpectNoFire(out, "gemm-bn-fold");
  // A BN after a MatMul is not a Gemm fold.
  Graph mm =
      MakeGraph({In("x", {2, 5})},
                {MakeNode(Op::MatMul, "mm", {"x"}, "y", {}, {{"B", RandTensor(rng, {5, 3})}}),
                 MakeBn(rng, "bn", "y", "z", 3)},
                {"z"});
  ExpectNoFire(mm, "gemm-bn-fold");
}

TEST(GemmActivationFuse, EveryActivationBecomesAnEpilogueStep) {
  Rng rng(3);
  for (const Node& act : AllActivations(rng, "y", "z", 4, 2)) {
    Graph g =
        MakeGraph({In("x", {3, 6})}, {MakeGemm(rng, "x", "y", 6, 4, rng.Coin(), {4}), act}, {"z"});
    OptimizeResult r = ExpectFiresOnce(g, "gemm-activation-fuse");
    ASSERT_EQ(r.graph.nodes.size(), 1u);
    ASSERT_EQ(r.graph.nodes[0].epilogue.size(), 1u);
    EXPECT_EQ(r.graph.nodes[0].epilogue[0].act, act.op);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), std::string(OpName(act.op)));
  }
}

// A PRelu slope per row ([3, 1] on the [3, 4] output) cannot be a per-column epilogue step;
// [1, 4] is per column and is stored as [4].
TEST(GemmActivationFuse, PReluOnlyWithAPerColumnSlope) {
  Rng rng(5);
  auto graph = [&](const Shape& s) {
    return MakeGraph({In("x", {3, 6})},
                     {MakeGemm(rng, "x", "y", 6, 4, false),
                      MakeNode(Op::PRelu, "p", {"y"}, "z", {}, {{"slope", RandTensor(rng, s)}})},
                     {"z"});
  };
  ExpectNoFire(graph({3, 1}), "gemm-activation-fuse");
  ExpectNoFire(graph({3, 4}), "gemm-activation-fuse");
  Graph g = graph({1, 4});
  OptimizeResult r = ExpectFiresOnce(g, "gemm-activation-fuse");
  EXPECT_EQ(r.graph.nodes[0].epilogue.at(0).params.at("slope").shape, (Shape{4}));
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "[1, 4]");
}

TEST(GemmActivationFuse, RefusesWhenAnotherConsumerSitsInBetween) {
  Rng rng(4);
  Graph g = MakeGraph({In("x", {3, 6})},
                      {MakeGemm(rng, "x", "y", 6, 4, false), MakeNode(Op::Relu, "a", {"y"}, "z"),
                       MakeNode(Op::Sigmoid, "s", {"y"}, "w")},
                      {"z", "w"});
  ExpectNoFire(g, "gemm-activation-fuse");
  Graph out = MakeGraph({In("x", {3, 6})},
                        {MakeGemm(rng, "x", "y", 6, 4, false), MakeNode(Op::Relu, "a", {"y"}, "z")},
                        {"z", "y"});
  ExpectNoFire(out, "gemm-activation-fuse");
}

Graph MatMulAdd(Rng& rng, Shape x, Shape bias, bool bias_left = false) {
  const int64_t k = x.back(), n = 3;
  return MakeGraph(
      {In("x", x)},
      {MakeNode(Op::MatMul, "mm", {"x"}, "y", {}, {{"B", RandTensor(rng, {k, n})}}),
       MakeNode(Op::Add, "add", {"y"}, "z", {}, {{bias_left ? "A" : "B", RandTensor(rng, bias)}})},
      {"z"});
}

TEST(MatMulAddFuse, PerOutputBiasBecomesGemmC) {
  Rng rng(5);
  for (Shape bias : {Shape{3}, Shape{1, 3}, Shape{1}, Shape{1, 1}}) {
    for (bool left : {false, true}) {
      Graph g = MatMulAdd(rng, {4, 5}, bias, left);
      OptimizeResult r = ExpectFiresOnce(g, "matmul-add-fuse");
      ASSERT_EQ(r.graph.nodes.size(), 1u);
      EXPECT_EQ(r.graph.nodes[0].op, Op::Gemm);
      ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "bias " + ShapeToString(bias));
    }
  }
}

TEST(MatMulAddFuse, RefusesWhatMustNotFuse) {
  Rng rng(6);
  // Biases that are not per-output vectors: per row, full, or adding a dim.
  for (Shape bias : {Shape{4, 1}, Shape{4, 3}, Shape{2, 4, 3}}) {
    ExpectNoFire(MatMulAdd(rng, {4, 5}, bias), "matmul-add-fuse");
  }
  // A MatMul of rank 3 has no Gemm form.
  ExpectNoFire(MatMulAdd(rng, {2, 4, 5}, {3}), "matmul-add-fuse");
  // Add of two values, not a constant.
  Graph two =
      MakeGraph({In("x", {4, 5}), In("b", {4, 3})},
                {MakeNode(Op::MatMul, "mm", {"x"}, "y", {}, {{"B", RandTensor(rng, {5, 3})}}),
                 MakeNode(Op::Add, "add", {"y", "b"}, "z")},
                {"z"});
  ExpectNoFire(two, "matmul-add-fuse");
  // The MatMul output is also a graph output.
  Graph out = MatMulAdd(rng, {4, 5}, {3});
  out.outputs.push_back("y");
  ExpectNoFire(out, "matmul-add-fuse");
}

}  // namespace
}  // namespace fusefuzz::testing
