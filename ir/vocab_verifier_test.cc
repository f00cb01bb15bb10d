// Shape inference and verifier messages of the real-net vocabulary: Flatten, Reshape, Gemm,
// MatMul, Concat on any axis, pool dilations, Pad edge/wrap (hand-computed with ONNX formulas).
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

using Ints = std::vector<int64_t>;

Node N(Op op, int inputs, AttrMap attrs = {}, ParamMap params = {}) {
  Node n;
  n.name = "n";
  n.op = op;
  for (int i = 0; i < inputs; ++i) n.inputs.push_back("v" + std::to_string(i));
  n.output = "out";
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

Tensor Ones(Shape s) { return Tensor(std::move(s), 1.0f); }

void ExpectErr(const Node& n, const std::vector<Shape>& in, const std::string& text) {
  std::string e = "<no error>";
  try {
    InferNodeShape(n, in);
  } catch (const InputError& err) {
    e = err.what();
  }
  EXPECT_NE(e.find(text), std::string::npos) << "message: " << e << "\nexpected: " << text;
}

TEST(InferShapeVocab, Flatten) {
  EXPECT_EQ(InferNodeShape(N(Op::Flatten, 1), {{2, 3, 4, 5}}), (Shape{2, 60}));
  EXPECT_EQ(InferNodeShape(N(Op::Flatten, 1, {{"axis", int64_t{0}}}), {{2, 3, 4, 5}}),
            (Shape{1, 120}));
  EXPECT_EQ(InferNodeShape(N(Op::Flatten, 1, {{"axis", int64_t{4}}}), {{2, 3, 4, 5}}),
            (Shape{120, 1}));
  EXPECT_EQ(InferNodeShape(N(Op::Flatten, 1, {{"axis", int64_t{-1}}}), {{2, 3, 4, 5}}),
            (Shape{24, 5}));
  ExpectErr(N(Op::Flatten, 1, {{"axis", int64_t{5}}}), {{2, 3, 4, 5}},
            "node 'n' (Flatten): axis 5 out of range [-4, 4] for input [2,3,4,5]");
}

TEST(InferShapeVocab, Reshape) {
  auto r = [](Ints s) { return N(Op::Reshape, 1, {{"shape", s}}); };
  EXPECT_EQ(InferNodeShape(r({0, -1}), {{2, 3, 4, 5}}), (Shape{2, 60}));
  EXPECT_EQ(InferNodeShape(r({6, 20}), {{2, 3, 4, 5}}), (Shape{6, 20}));
  EXPECT_EQ(InferNodeShape(r({-1}), {{2, 3}}), (Shape{6}));
  ExpectErr(r({-1, -1}), {{2, 3}}, "attribute 'shape' has more than one -1");
  ExpectErr(r({4, -1}), {{2, 3}}, "cannot infer the -1 of shape [4,-1] from input [2,3]");
  ExpectErr(r({5}), {{2, 3}}, "shape [5] has 5 elements, input [2,3] has 6");
  ExpectErr(r({0, 0, 0}), {{2, 3}}, "shape entry 2 is 0 (copy the input dim) but input [2,3]");
  ExpectErr(r({-2, 3}), {{2, 3}}, "shape entry 0 must be >= -1, got -2");
  ExpectErr(r({1 << 20, 1 << 20, 1 << 20}), {{2, 3}}, "has more elements than input [2,3]");
}

TEST(InferShapeVocab, Gemm) {
  Node g = N(Op::Gemm, 1, {}, {{"B", Ones({6, 4})}, {"C", Ones({4})}});
  EXPECT_EQ(InferNodeShape(g, {{2, 6}}), (Shape{2, 4}));
  Node t = N(Op::Gemm, 1, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}, {{"B", Ones({4, 6})}});
  EXPECT_EQ(InferNodeShape(t, {{6, 2}}), (Shape{2, 4}));
  for (Shape c : {Shape{1}, Shape{1, 4}, Shape{2, 1}, Shape{2, 4}}) {
    Node ok = g;
    ok.params["C"] = Ones(c);
    EXPECT_EQ(InferNodeShape(ok, {{2, 6}}), (Shape{2, 4})) << ShapeToString(c);
  }
  Node bad_c = g;
  bad_c.params["C"] = Ones({3});
  ExpectErr(bad_c, {{2, 6}}, "param 'C' [3] does not broadcast to the output [2,4]");
  bad_c.params["C"] = Ones({1, 2, 4});
  ExpectErr(bad_c, {{2, 6}}, "param 'C' [1,2,4] does not broadcast");
  ExpectErr(g, {{2, 5}}, "param 'B' [6,4]: K = 6 does not match K = 5 of input [2,5]");
  ExpectErr(g, {{1, 2, 6}}, "input 0: expected rank 2 ([M, K]), got [1,2,6]");
  ExpectErr(N(Op::Gemm, 1, {{"transB", int64_t{2}}}, {{"B", Ones({6, 4})}}), {{2, 6}},
            "transB must be 0 or 1, got 2");
  ExpectErr(N(Op::Gemm, 1, {}, {{"B", Ones({6, 4, 1})}}), {{2, 6}},
            "param 'B': expected rank 2, got [6,4,1]");
  ExpectErr(N(Op::Gemm, 1), {{2, 6}}, "missing param 'B'");
}

TEST(InferShapeVocab, GemmEpilogue) {
  Node g = N(Op::Gemm, 1, {}, {{"B", Ones({6, 4})}});
  EpilogueStep relu;
  g.epilogue.push_back(relu);
  EXPECT_EQ(InferNodeShape(g, {{2, 6}}), (Shape{2, 4}));
  EpilogueStep prelu;
  prelu.act = Op::PRelu;
  prelu.params["slope"] = Ones({3});
  g.epilogue = {prelu};
  ExpectErr(g, {{2, 6}}, "param 'slope': expected shape [4] (per channel) or [1], got [3]");
  prelu.params["slope"] = Ones({1, 4});  // broadcasts, but an epilogue holds [N] or [1] only
  g.epilogue = {prelu};
  ExpectErr(g, {{2, 6}}, "param 'slope': expected shape [4] (per channel) or [1], got [1,4]");
  EpilogueStep ss;
  ss.kind = EpilogueKind::kScaleShift;
  g.epilogue = {ss};
  ExpectErr(g, {{2, 6}}, "a Gemm epilogue holds only activation and clamp steps");
  Node conv = N(Op::MatMul, 1, {}, {{"B", Ones({6, 4})}});
  conv.epilogue = {relu};
  ExpectErr(conv, {{2, 6}}, "only FusedConv, QLinearConv and Gemm have an epilogue");
}

TEST(InferShapeVocab, MatMul) {
  Node m = N(Op::MatMul, 1, {}, {{"B", Ones({5, 3})}});
  EXPECT_EQ(InferNodeShape(m, {{2, 5}}), (Shape{2, 3}));
  EXPECT_EQ(InferNodeShape(m, {{1, 2, 4, 5}}), (Shape{1, 2, 4, 3}));
  ExpectErr(m, {{2, 4}}, "param 'B': expected dim 0 = K = 4 (last dim of [2,4]), got [5,3]");
  ExpectErr(m, {{5}}, "input 0: expected rank >= 2, got [5]");
}

TEST(InferShapeVocab, ConcatAnyAxis) {
  Node c = N(Op::Concat, 2, {{"axis", int64_t{2}}});
  EXPECT_EQ(InferNodeShape(c, {{1, 2, 3, 4}, {1, 2, 5, 4}}), (Shape{1, 2, 8, 4}));
  c.attrs["axis"] = int64_t{-1};
  EXPECT_EQ(InferNodeShape(c, {{1, 2, 3, 4}, {1, 2, 3, 1}}), (Shape{1, 2, 3, 5}));
  c.attrs["axis"] = int64_t{0};
  EXPECT_EQ(InferNodeShape(c, {{2, 7}, {3, 7}}), (Shape{5, 7}));
  ExpectErr(c, {{2, 7}, {3, 6}}, "input 1: expected shape [2,7] except dim 0, got [3,6]");
  c.attrs["axis"] = int64_t{4};
  ExpectErr(c, {{1, 2, 3, 4}, {1, 2, 3, 4}}, "axis 4 out of range for rank 4");
}

TEST(InferShapeVocab, PoolDilations) {
  Node p = N(Op::MaxPool, 1, {{"kernel_shape", Ints{3, 2}}, {"dilations", Ints{2, 3}}});
  // H: (7 - (2*2+1)) / 1 + 1 = 3; W: (7 - (3*1+1)) / 1 + 1 = 4.
  EXPECT_EQ(InferNodeShape(p, {{1, 1, 7, 7}}), (Shape{1, 1, 3, 4}));
  Node ceil = N(Op::AvgPool, 1,
                {{"kernel_shape", Ints{2, 2}},
                 {"dilations", Ints{2, 2}},
                 {"strides", Ints{2, 2}},
                 {"ceil_mode", int64_t{1}}});
  // (6 - 3) / 2 = 1 remainder 1: ceil gives 3 windows; the third starts at 4 < 6: kept.
  EXPECT_EQ(InferNodeShape(ceil, {{1, 1, 6, 6}}), (Shape{1, 1, 3, 3}));
  p.attrs["dilations"] = Ints{0, 1};
  ExpectErr(p, {{1, 1, 7, 7}}, "dilations must be >= 1");
  // Pads 1 both sides, kernel 2, dilation 3 on an input of 2: the only window has taps at -1
  // and 2, both in the padding.
  Node empty =
      N(Op::MaxPool, 1,
        {{"kernel_shape", Ints{2, 1}}, {"dilations", Ints{3, 1}}, {"pads", Ints{1, 0, 1, 0}}});
  ExpectErr(empty, {{1, 1, 2, 2}}, "a dilated window has no tap inside input [1,1,2,2]");
}

TEST(InferShapeVocab, PadEdgeWrap) {
  Node edge = N(Op::Pad, 1, {{"pads", Ints{5, 0, 0, 5}}, {"mode", std::string("edge")}});
  EXPECT_EQ(InferNodeShape(edge, {{1, 1, 2, 2}}), (Shape{1, 1, 7, 7}));
  Node wrap = N(Op::Pad, 1, {{"pads", Ints{2, 0, 0, 1}}, {"mode", std::string("wrap")}});
  EXPECT_EQ(InferNodeShape(wrap, {{1, 1, 2, 2}}), (Shape{1, 1, 4, 3}));
  wrap.attrs["pads"] = Ints{3, 0, 0, 0};
  ExpectErr(wrap, {{1, 1, 2, 2}}, "wrap pads must be at most the padded dim");
  edge.attrs["mode"] = std::string("mirror");
  ExpectErr(edge, {{1, 1, 2, 2}},
            "mode must be \"constant\", \"reflect\", \"edge\" or \"wrap\", got \"mirror\"");
}

}  // namespace
}  // namespace fusefuzz
