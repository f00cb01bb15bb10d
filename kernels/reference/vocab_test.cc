// Reference semantics of the real-net vocabulary against hand-computed values: Gemm (transposes,
// alpha/beta, every C broadcast, epilogue), MatMul, Flatten/Reshape, Concat on H and W, pool
// dilations, Pad edge/wrap; and the magnitudes (docs/reference.md).
#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

TEST(RefGemm, PlainAndBias) {
  // A [2,3] x B [3,2] + C [2].
  Node n = MakeNode(Op::Gemm, {}, {{"B", T({3, 2}, {1, 2, 3, 4, 5, 6})}, {"C", T({2}, {10, -20})}});
  RefTensor y = RunOp(n, {T({2, 3}, {1, -1, 2, 0, 1, -2})});
  // row 0: [1-3+10, 2-4+12] = [8, 10] + C; row 1: [3-10, 4-12] = [-7, -8] + C.
  ExpectValues(y, {2, 2}, {18, -10, 3, -28});
  // Magnitude: sum |a||b| + |C|: row 0: [1+3+10, 2+4+12] + [10, 20].
  ExpectMags(y, {24, 38, 23, 36});
}

TEST(RefGemm, TransposesAlphaBetaAndCShapes) {
  // A stored [K=2, M=2] (transA), B stored [N=2, K=2] (transB): Y = alpha * A^T B^T + beta C.
  const Tensor a = T({2, 2}, {1, 2, 3, 4});  // A^T = [[1,3],[2,4]]
  const Tensor b = T({2, 2}, {1, 0, 1, 1});  // B^T = [[1,1],[0,1]]
  // A^T B^T = [[1, 4], [2, 6]].
  const AttrMap attrs = {
      {"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 2.0}, {"beta", -1.0}};
  struct Case {
    Shape c;
    std::vector<float> data;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {{1}, {1}, {1, 7, 3, 11}},
      {{2}, {1, 2}, {1, 6, 3, 10}},
      {{1, 2}, {1, 2}, {1, 6, 3, 10}},
      {{2, 1}, {1, 2}, {1, 7, 2, 10}},
      {{2, 2}, {1, 2, 3, 4}, {1, 6, 1, 8}},
  };
  for (const Case& c : cases) {
    Node n = MakeNode(Op::Gemm, attrs, {{"B", b}, {"C", T(c.c, c.data)}});
    ExpectValues(RunOp(n, {a}), {2, 2}, c.want);
  }
}

TEST(RefGemm, EpilogueIsTheUnfusedActivation) {
  Node n = MakeNode(Op::Gemm, {}, {{"B", T({1, 3}, {1, -1, 2})}});
  EpilogueStep prelu;
  prelu.act = Op::PRelu;
  prelu.params["slope"] = T({3}, {0.5, 0.25, 2});
  n.epilogue = {prelu};
  ExpectValues(RunOp(n, {T({2, 1}, {1, -2})}), {2, 3}, {1, -0.25, 2, -1, 2, -8});
}

TEST(RefMatMul, LastDimOfAnyRank) {
  Node n = MakeNode(Op::MatMul, {}, {{"B", T({2, 1}, {1, -1})}});
  RefTensor y = RunOp(n, {T({1, 2, 1, 2}, {3, 1, -2, 5})});
  ExpectValues(y, {1, 2, 1, 1}, {2, -7});
  ExpectMags(y, {4, 7});
}

TEST(RefReshape, FlattenAndReshapeKeepRowMajorOrder) {
  const Tensor x = T({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(RunOp(MakeNode(Op::Flatten), {x}), {1, 6}, {1, 2, 3, 4, 5, 6});
  ExpectValues(RunOp(MakeNode(Op::Reshape, {{"shape", Ints{3, -1}}}), {x}), {3, 2},
               {1, 2, 3, 4, 5, 6});
}

TEST(RefConcat, HeightAndWidth) {
  const Tensor a = T({1, 1, 1, 2}, {1, 2}), b = T({1, 1, 1, 2}, {3, 4});
  ExpectValues(RunOp(MakeNode(Op::Concat, {{"axis", int64_t{2}}}), {a, b}), {1, 1, 2, 2},
               {1, 2, 3, 4});
  ExpectValues(RunOp(MakeNode(Op::Concat, {{"axis", int64_t{-1}}}), {a, b}), {1, 1, 1, 4},
               {1, 2, 3, 4});
  const Tensor c = T({2, 1, 1, 1}, {1, 2}), d = T({2, 1, 1, 2}, {3, 4, 5, 6});
  ExpectValues(RunOp(MakeNode(Op::Concat, {{"axis", int64_t{3}}}), {c, d}), {2, 1, 1, 3},
               {1, 3, 4, 2, 5, 6});
}

TEST(RefPool, Dilations) {
  // 1x5 row, kernel 1x2 dilation 2: windows {0,2}, {1,3}, {2,4}.
  const Tensor x = T({1, 1, 1, 5}, {1, -3, 2, 4, -1});
  const AttrMap a = {{"kernel_shape", Ints{1, 2}}, {"dilations", Ints{1, 2}}};
  ExpectValues(RunOp(MakeNode(Op::MaxPool, a), {x}), {1, 1, 1, 3}, {2, 4, 2});
  ExpectValues(RunOp(MakeNode(Op::AvgPool, a), {x}), {1, 1, 1, 3}, {1.5, 0.5, 0.5});
  // Pads 1 with count_include_pad: window 0 has taps -1 (pad) and 1; window 1 taps 0 and 2.
  AttrMap p = a;
  p["pads"] = Ints{0, 1, 0, 1};
  p["count_include_pad"] = int64_t{1};
  // Output width (5 + 2 - 3) + 1 = 5; last window taps 3 and 5 (pad).
  ExpectValues(RunOp(MakeNode(Op::AvgPool, p), {x}), {1, 1, 1, 5}, {-1.5, 1.5, 0.5, 0.5, 2});
  p.erase("count_include_pad");
  ExpectValues(RunOp(MakeNode(Op::AvgPool, p), {x}), {1, 1, 1, 5}, {-3, 1.5, 0.5, 0.5, 4});
}

TEST(RefPad, EdgeAndWrap) {
  const Tensor x = T({1, 1, 1, 3}, {1, 2, 3});
  ExpectValues(
      RunOp(MakeNode(Op::Pad, {{"pads", Ints{0, 2, 0, 1}}, {"mode", std::string("edge")}}), {x}),
      {1, 1, 1, 6}, {1, 1, 1, 2, 3, 3});
  ExpectValues(
      RunOp(MakeNode(Op::Pad, {{"pads", Ints{0, 2, 0, 3}}, {"mode", std::string("wrap")}}), {x}),
      {1, 1, 1, 8}, {2, 3, 1, 2, 3, 1, 2, 3});
  const Tensor col = T({1, 1, 2, 1}, {5, 6});
  ExpectValues(
      RunOp(MakeNode(Op::Pad, {{"pads", Ints{1, 0, 2, 0}}, {"mode", std::string("wrap")}}), {col}),
      {1, 1, 5, 1}, {6, 5, 6, 5, 6});
}

}  // namespace
}  // namespace fusefuzz::reftest
