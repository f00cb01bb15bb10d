// Fast kernels of the real-net vocabulary against the reference, within the oracle's bound:
// Gemm (every transpose, alpha/beta, C shape, epilogue), MatMul, Flatten/Reshape, Concat on
// every axis, dilated pools, Pad edge/wrap.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz::fast_test {
namespace {

using Ints = std::vector<int64_t>;

Node Make(Op op, AttrMap attrs = {}, ParamMap params = {}) {
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

TEST(FastGemm, MatchesReferenceForEveryLayout) {
  uint64_t seed = 1;
  const int64_t m = 3, k = 37, n = 5;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (Shape c : {Shape{}, Shape{1}, Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n}}) {
        ParamMap p = {{"B", Random(tb ? Shape{n, k} : Shape{k, n}, seed++)}};
        if (!c.empty()) p["C"] = Random(c, seed++);
        AttrMap a = {{"transA", int64_t{ta}}, {"transB", int64_t{tb}}};
        if (ta) a["alpha"] = -0.5;
        if (tb) a["beta"] = 2.0;
        Node g = Make(Op::Gemm, a, p);
        EpilogueStep relu;
        if (c.size() == 2) g.epilogue = {relu};
        Graph graph = OneNode(g, {ta ? Shape{k, m} : Shape{m, k}});
        CheckAgainstReference(graph, Inputs(graph, seed++),
                              "gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                                  " C=" + ShapeToString(c));
      }
    }
  }
}

TEST(FastGemm, PReluEpiloguePerColumn) {
  Node g = Make(Op::Gemm, {}, {{"B", Random({4, 3}, 7)}});
  EpilogueStep prelu;
  prelu.act = Op::PRelu;
  prelu.params["slope"] = Values({3}, {0.5f, -1.0f, 2.0f});
  EpilogueStep clamp;
  clamp.kind = EpilogueKind::kClamp;
  clamp.attrs = {{"min", -0.5}, {"max", 0.75}};
  g.epilogue = {prelu, clamp};
  Graph graph = OneNode(g, {{6, 4}});
  CheckAgainstReference(graph, Inputs(graph, 8), "gemm prelu+clamp");
}

TEST(FastMatMul, MatchesReference) {
  Graph g2 = OneNode(Make(Op::MatMul, {}, {{"B", Random({64, 9}, 3)}}), {{4, 64}});
  CheckAgainstReference(g2, Inputs(g2, 4), "matmul rank 2");
  Graph g4 = OneNode(Make(Op::MatMul, {}, {{"B", Random({5, 2}, 5)}}), {{2, 3, 4, 5}});
  CheckAgainstReference(g4, Inputs(g4, 6), "matmul rank 4");
}

TEST(FastReshape, ExactCopies) {
  Graph f = OneNode(Make(Op::Flatten, {{"axis", int64_t{2}}}), {{2, 3, 4, 5}});
  TensorMap in = Inputs(f, 1);
  TensorMap out = CheckAgainstReference(f, in, "flatten");
  EXPECT_EQ(out.at("out").data, in.at("x").data);
  Graph r = OneNode(Make(Op::Reshape, {{"shape", Ints{0, -1, 2}}}), {{2, 3, 4, 5}});
  CheckAgainstReference(r, Inputs(r, 2), "reshape");
}

TEST(FastConcat, EveryAxis) {
  for (int64_t axis = -4; axis < 4; ++axis) {
    Shape a = {2, 3, 4, 5}, b = a;
    b[static_cast<size_t>(axis < 0 ? axis + 4 : axis)] = 2;
    Graph g = OneNode(Make(Op::Concat, {{"axis", axis}}), {a, b});
    CheckAgainstReference(g, Inputs(g, 10 + static_cast<uint64_t>(axis + 4)),
                          "concat axis " + std::to_string(axis));
  }
}

TEST(FastPool, DilatedWindowsMatchReference) {
  uint64_t seed = 20;
  for (Op op : {Op::MaxPool, Op::AvgPool}) {
    for (int64_t cip = 0; cip < 2; ++cip) {
      for (int64_t ceil = 0; ceil < 2; ++ceil) {
        AttrMap a = {{"kernel_shape", Ints{3, 2}},
                     {"dilations", Ints{2, 3}},
                     {"strides", Ints{2, 1}},
                     {"pads", Ints{1, 0, 2, 1}},
                     {"ceil_mode", ceil}};
        if (op == Op::AvgPool) a["count_include_pad"] = cip;
        Graph g = OneNode(Make(op, a), {{2, 3, 9, 8}});
        CheckAgainstReference(g, Inputs(g, seed++),
                              std::string(OpName(op)) + " cip=" + std::to_string(cip) +
                                  " ceil=" + std::to_string(ceil));
      }
    }
  }
}

TEST(FastPad, EdgeAndWrapAreExact) {
  for (const char* mode : {"edge", "wrap"}) {
    Graph g = OneNode(Make(Op::Pad, {{"pads", Ints{2, 3, 1, 4}}, {"mode", std::string(mode)}}),
                      {{1, 2, 3, 4}});
    TensorMap in = Inputs(g, 30);
    TensorMap fast = RunFast(g, in, FastOptions{1});
    RefTensorMap ref = RunReference(g, in);
    EXPECT_TRUE(fast.at("out").BitwiseEquals(ToFloatTensor(ref.at("out")))) << mode;
  }
}

}  // namespace
}  // namespace fusefuzz::fast_test
