// Shape inference (hand-computed with the ONNX formulas) and verifier messages, op by op.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/error.h"

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

std::string Err(const Node& n, const std::vector<Shape>& in) {
  try {
    InferNodeShape(n, in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

void ExpectErr(const Node& n, const std::vector<Shape>& in, const std::string& text) {
  std::string e = Err(n, in);
  EXPECT_NE(e.find(text), std::string::npos) << "message: " << e << "\nexpected: " << text;
}

TEST(InferShape, ConvGroupsStridesDilationsAsymmetricPads) {
  Node n = N(Op::Conv, 1,
             {{"group", int64_t{2}},
              {"strides", Ints{2, 1}},
              {"dilations", Ints{1, 2}},
              {"pads", Ints{1, 0, 2, 1}}},
             {{"W", Ones({4, 2, 3, 3})}});
  // H: (6 + 1 + 2 - 3) / 2 + 1 = 4; W: (6 + 0 + 1 - 5) / 1 + 1 = 3.
  EXPECT_EQ(InferNodeShape(n, {{1, 4, 6, 6}}), (Shape{1, 4, 4, 3}));
  ExpectErr(n, {{1, 3, 6, 6}}, "node 'n' (Conv): input channels 3 not divisible by group 2");
  Node bad_b = n;
  bad_b.params["B"] = Ones({3});
  ExpectErr(bad_b, {{1, 4, 6, 6}}, "param 'B': expected shape [4], got [3]");
  ExpectErr(n, {{1, 4, 6}}, "input 0: expected rank 4 (NCHW), got [1,4,6]");
  Node big = N(Op::Conv, 1, {}, {{"W", Ones({1, 1, 5, 5})}});
  ExpectErr(big, {{1, 1, 4, 4}}, "kernel 5x5 (with dilation and pads) does not fit");
}

TEST(InferShape, DepthwiseWithMultiplier) {
  Node n = N(Op::Conv, 1, {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}},
             {{"W", Ones({4, 1, 3, 3})}});
  EXPECT_EQ(InferNodeShape(n, {{1, 2, 5, 5}}), (Shape{1, 4, 5, 5}));
  Node m = N(Op::Conv, 1, {{"group", int64_t{2}}}, {{"W", Ones({3, 1, 3, 3})}});
  ExpectErr(m, {{1, 2, 5, 5}}, "output channels 3 not divisible by group 2");
}

TEST(InferShape, FusedConvEpilogue) {
  Node n = N(Op::FusedConv, 2, {}, {{"W", Ones({3, 2, 1, 1})}});
  EpilogueStep ss;
  ss.kind = EpilogueKind::kScaleShift;
  ss.params = {{"scale", Ones({3})}, {"shift", Ones({3})}};
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  add.input = 1;
  EpilogueStep act;
  act.act = Op::Clip;
  act.attrs = {{"min", 0.0}, {"max", 6.0}};
  n.epilogue = {ss, add, act};
  EXPECT_EQ(InferNodeShape(n, {{1, 2, 4, 4}, {1, 3, 1, 1}}), (Shape{1, 3, 4, 4}));
  ExpectErr(n, {{1, 2, 4, 4}, {1, 3, 5, 4}},
            "epilogue step 1: add operand [1,3,5,4] does not broadcast to the conv output");
  Node unused = n;
  unused.epilogue = {ss};
  ExpectErr(unused, {{1, 2, 4, 4}, {1, 3, 4, 4}}, "input 1 is not used by any epilogue step");
  Node not_act = n;
  not_act.epilogue[2].act = Op::Add;
  ExpectErr(not_act, {{1, 2, 4, 4}, {1, 3, 4, 4}}, "epilogue step 2: Add is not an activation");
  // An epilogue PRelu slope is per channel [M, 1, 1] or [1]; [M] would run along W.
  Node prelu = n;
  prelu.epilogue[2] = EpilogueStep{};
  prelu.epilogue[2].act = Op::PRelu;
  for (const Shape& ok : std::vector<Shape>{{3, 1, 1}, {1}}) {
    prelu.epilogue[2].params = {{"slope", Ones(ok)}};
    EXPECT_EQ(InferNodeShape(prelu, {{1, 2, 4, 4}, {1, 3, 1, 1}}), (Shape{1, 3, 4, 4}));
  }
  for (const Shape& bad : std::vector<Shape>{{3}, {4}, {1, 3, 1, 1}, {3, 4, 4}}) {
    prelu.epilogue[2].params = {{"slope", Ones(bad)}};
    ExpectErr(prelu, {{1, 2, 4, 4}, {1, 3, 1, 1}},
              "epilogue step 2: param 'slope': expected shape [3,1,1] (per channel) or [1], got " +
                  ShapeToString(bad));
  }
}

TEST(InferShape, Norms) {
  ParamMap bn = {
      {"scale", Ones({4})}, {"bias", Ones({4})}, {"mean", Ones({4})}, {"var", Ones({4})}};
  EXPECT_EQ(InferNodeShape(N(Op::BatchNorm, 1, {}, bn), {{2, 4, 3, 3}}), (Shape{2, 4, 3, 3}));
  ExpectErr(N(Op::BatchNorm, 1, {}, bn), {{2, 3, 3, 3}}, "param 'scale': expected shape [3]");
  ExpectErr(N(Op::BatchNorm, 1, {{"epsilon", -1.0}}, bn), {{2, 4, 3, 3}},
            "epsilon must be finite and >= 0");
  Node ln = N(Op::LayerNorm, 1, {{"axis", int64_t{2}}},
              {{"scale", Ones({3, 3})}, {"bias", Ones({3, 3})}});
  EXPECT_EQ(InferNodeShape(ln, {{1, 4, 3, 3}}), (Shape{1, 4, 3, 3}));
  ExpectErr(ln, {{1, 4, 3, 2}}, "param 'scale': expected shape [3,2], got [3,3]");
  ParamMap cb = {{"scale", Ones({4})}, {"bias", Ones({4})}};
  EXPECT_EQ(InferNodeShape(N(Op::GroupNorm, 1, {{"num_groups", int64_t{2}}}, cb), {{1, 4, 2, 2}}),
            (Shape{1, 4, 2, 2}));
  ExpectErr(N(Op::GroupNorm, 1, {{"num_groups", int64_t{3}}}, cb), {{1, 4, 2, 2}},
            "num_groups 3 must be >= 1 and divide C = 4");
  ExpectErr(N(Op::InstanceNorm, 1, {}, cb), {{1, 4, 2}}, "expected rank 4");
}

TEST(InferShape, Activations) {
  for (Op op : {Op::Relu, Op::Relu6, Op::Sigmoid, Op::Tanh, Op::Silu, Op::HardSwish, Op::Gelu,
                Op::Elu, Op::LeakyRelu, Op::HardSigmoid}) {
    EXPECT_EQ(InferNodeShape(N(op, 1), {{1, 2, 3, 3}}), (Shape{1, 2, 3, 3})) << OpName(op);
  }
  ExpectErr(N(Op::Clip, 1, {{"min", 1.0}}), {{1, 2}}, "missing required attribute 'max' of Clip");
  // min > max is ONNX's Clip too (every output is max): valid.
  EXPECT_EQ(InferNodeShape(N(Op::Clip, 1, {{"min", 1.0}, {"max", 0.0}}), {{1, 2}}), (Shape{1, 2}));
  // PRelu's slope broadcasts unidirectionally from the right (ONNX): [2] lines up with W.
  ExpectErr(N(Op::PRelu, 1, {}, {{"slope", Ones({2})}}), {{1, 2, 3, 3}},
            "param 'slope': shape [2] does not broadcast to the input [1,2,3,3] (aligned from the "
            "right; per channel is [C, 1, 1])");
  ExpectErr(N(Op::PRelu, 1, {}, {{"slope", Ones({1, 1, 2, 3, 3})}}), {{1, 2, 3, 3}},
            "param 'slope': shape [1,1,2,3,3] does not broadcast to the input [1,2,3,3] "
            "(aligned from the right; per channel is [C, 1, 1])");
  for (const Shape& s : std::vector<Shape>{
           {1}, {2, 1, 1}, {3}, {3, 3}, {2, 3, 3}, {1, 2, 3, 3}, {1, 1, 1}, {2, 1, 3}}) {
    EXPECT_EQ(InferNodeShape(N(Op::PRelu, 1, {}, {{"slope", Ones(s)}}), {{1, 2, 3, 3}}),
              (Shape{1, 2, 3, 3}))
        << ShapeToString(s);
  }
  EXPECT_EQ(InferNodeShape(N(Op::PRelu, 1, {}, {{"slope", Ones({4})}}), {{4}}), (Shape{4}));
  ExpectErr(N(Op::Gelu, 1, {{"approximate", std::string("fast")}}), {{1, 2}},
            "Gelu approximate must be \"none\" or \"tanh\", got \"fast\"");
  ExpectErr(N(Op::LeakyRelu, 1, {{"alpha", std::string("x")}}), {{1, 2}},
            "attribute 'alpha' must be number");
}

TEST(InferShape, BinaryBroadcastingIsNumpy) {
  EXPECT_EQ(InferNodeShape(N(Op::Add, 2), {{1, 3, 4, 4}, {1, 3, 1, 1}}), (Shape{1, 3, 4, 4}));
  // A [C] constant aligns with the last dim (W), not with C: [3] against W = 4 fails...
  Node sub = N(Op::Sub, 1, {}, {{"A", Ones({3})}});
  ExpectErr(sub, {{1, 3, 4, 4}}, "node 'n' (Sub): operands [3] and [1,3,4,4] do not broadcast");
  // ... and against W = 3 broadcasts along W.
  EXPECT_EQ(InferNodeShape(sub, {{1, 2, 5, 3}}), (Shape{1, 2, 5, 3}));
  Node both = N(Op::Mul, 0, {}, {{"A", Ones({1})}, {"B", Ones({1})}});
  ExpectErr(both, {}, "expected 1..2 inputs, got 0");
  Node two_and_const = N(Op::Div, 2, {}, {{"B", Ones({1})}});
  ExpectErr(two_and_const, {{1, 2}, {1, 2}}, "expected 1 input(s) besides constant params, got 2");
}

TEST(InferShape, PadAndPools) {
  Node pad = N(Op::Pad, 1, {{"pads", Ints{1, 0, 2, 1}}});
  EXPECT_EQ(InferNodeShape(pad, {{1, 2, 4, 4}}), (Shape{1, 2, 7, 5}));
  Node reflect = N(Op::Pad, 1, {{"pads", Ints{1, 2, 1, 3}}, {"mode", std::string("reflect")}});
  EXPECT_EQ(InferNodeShape(reflect, {{1, 2, 4, 4}}), (Shape{1, 2, 6, 9}));
  ExpectErr(reflect, {{1, 2, 4, 3}}, "reflect pads must be smaller than the padded dim");
  ExpectErr(N(Op::Pad, 1, {{"pads", Ints{1, 1}}}), {{1, 2, 4, 4}},
            "attribute 'pads' must have 4 entries, got 2");

  Node mp = N(Op::MaxPool, 1,
              {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  EXPECT_EQ(InferNodeShape(mp, {{1, 2, 5, 5}}), (Shape{1, 2, 3, 3}));  // (5+2-3)/2+1
  // ceil_mode: (4+1-2)/2 rounds up to 2 -> 3 windows, but the third starts at 4 = in + pad_begin,
  // inside the end padding, and is dropped (ONNX): 2.
  Node ceil = N(Op::AvgPool, 1,
                {{"kernel_shape", Ints{2, 2}},
                 {"strides", Ints{2, 2}},
                 {"pads", Ints{0, 0, 1, 1}},
                 {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(InferNodeShape(ceil, {{1, 1, 4, 4}}), (Shape{1, 1, 2, 2}));
  // Without the drop rule: in 5, k 2, s 2: floor 2, ceil 3 (last window starts at 4 < 5).
  Node ceil5 =
      N(Op::MaxPool, 1,
        {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
  EXPECT_EQ(InferNodeShape(ceil5, {{1, 1, 5, 5}}), (Shape{1, 1, 3, 3}));
  ceil5.attrs["ceil_mode"] = int64_t{0};
  EXPECT_EQ(InferNodeShape(ceil5, {{1, 1, 5, 5}}), (Shape{1, 1, 2, 2}));
  Node pad_big = N(Op::MaxPool, 1, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 2, 0, 0}}});
  ExpectErr(pad_big, {{1, 1, 4, 4}}, "node 'n' (MaxPool): pads must be smaller than the kernel");
  ExpectErr(N(Op::MaxPool, 1, {{"kernel_shape", Ints{5, 5}}}), {{1, 1, 4, 4}},
            "kernel 5x5 does not fit input [1,1,4,4]");
  EXPECT_EQ(InferNodeShape(N(Op::GlobalAvgPool, 1), {{2, 3, 5, 7}}), (Shape{2, 3, 1, 1}));
}

TEST(InferShape, ConcatAndIdentity) {
  EXPECT_EQ(InferNodeShape(N(Op::Concat, 3), {{1, 2, 3, 3}, {1, 3, 3, 3}, {1, 1, 3, 3}}),
            (Shape{1, 6, 3, 3}));
  ExpectErr(N(Op::Concat, 2), {{1, 2, 3, 3}, {1, 2, 4, 3}},
            "input 1: expected shape [1,2,3,3] except dim 1, got [1,2,4,3]");
  ExpectErr(N(Op::Concat, 1, {{"axis", int64_t{-5}}}), {{1, 2, 3, 3}},
            "axis -5 out of range for rank 4");
  EXPECT_EQ(InferNodeShape(N(Op::Identity, 1), {{7}}), (Shape{7}));
}

TEST(Verify, GraphLevelChecks) {
  Graph g;
  g.inputs = {{"x", {1, 2, 2, 2}}};
  Node a = N(Op::Relu, 0);
  a.name = "a";
  a.inputs = {"x"};
  a.output = "y";
  g.nodes = {a};
  g.outputs = {"y"};
  ShapeMap shapes = VerifyGraph(g);
  EXPECT_EQ(shapes.at("y"), (Shape{1, 2, 2, 2}));
  Graph no_out = g;
  no_out.outputs.clear();
  EXPECT_THROW(VerifyGraph(no_out), InputError);
  Limits small;
  small.max_elements_per_tensor = 4;
  try {
    VerifyGraph(g, small);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "graph input 'x'");
    EXPECT_NE(e.problem().find("exceeds the limit of 4 elements"), std::string::npos);
  }
}

TEST(Verify, NamesMustBeUtf8) {
  // ONNX names are unchecked bytes; JSON (reproducers, summaries) holds UTF-8 only.
  Graph g;
  g.inputs = {{"x\xce\xbb", {1, 2, 2, 2}}};  // "xλ": fine
  Node a = N(Op::Relu, 0);
  a.name = "a/\xe2\x82\xac\"\n";  // a/€, a quote and a newline: fine
  a.inputs = {g.inputs[0].name};
  a.output = "y";
  g.nodes = {a};
  g.outputs = {"y"};
  EXPECT_NO_THROW(VerifyGraph(g));
  const std::vector<std::string> bad = {
      "\xff",              // never in UTF-8
      "a\xce",             // cut short
      "\xc0\xaf",          // overlong "/"
      "\xed\xa0\x80",      // a surrogate
      "\xf4\x90\x80\x80",  // beyond U+10FFFF
  };
  for (const std::string& name : bad) {
    Graph b = g;
    b.nodes[0].output = name;
    b.outputs = {name};
    try {
      VerifyGraph(b);
      ADD_FAILURE() << "accepted a name of " << name.size() << " bytes";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "node 0 output: name is not valid UTF-8");
    }
  }
}

}  // namespace
}  // namespace fusefuzz
