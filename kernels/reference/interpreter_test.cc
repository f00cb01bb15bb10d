// The interpreter as a whole: input checking, all_values, FusedConv == the unfused sequence,
// m >= |r| over a mixed graph, and the float32 view.
#include <cfloat>
#include <cstdint>

#include "ir/error.h"
#include "kernels/reference/ref_test_util.h"

namespace fusefuzz::reftest {
namespace {

using Ints = std::vector<int64_t>;

// Deterministic values in [-2, 2) from a 64-bit LCG (no std distributions).
Tensor Noise(Shape shape, uint64_t seed) {
  std::vector<float> v;
  uint64_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < NumElements(shape); ++i) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    v.push_back(static_cast<float>(static_cast<double>(s >> 40) / double(1 << 24) * 4.0 - 2.0));
  }
  return T(std::move(shape), std::move(v));
}

Node Wire(Node n, std::vector<std::string> inputs, std::string output) {
  n.name = output + "_node";
  n.inputs = std::move(inputs);
  n.output = std::move(output);
  return n;
}

Graph ReluThenNeg() {
  Graph g;
  g.inputs = {{"x", {1, 2}}};
  g.nodes = {Wire(MakeNode(Op::Relu), {"x"}, "a"),
             Wire(MakeNode(Op::Mul, {}, {{"B", T({1}, {-1})}}), {"a"}, "b")};
  g.outputs = {"b"};
  return g;
}

TEST(RefInterpreter, MissingOrMisshapedInputIsAnInputError) {
  const Graph g = ReluThenNeg();
  try {
    RunReference(g, {});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "graph input 'x'");
  }
  try {
    RunReference(g, {{"x", T({2, 1}, {1, 2})}});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "graph input 'x'");
    EXPECT_NE(e.problem().find("[1,2]"), std::string::npos) << e.problem();
  }
  Tensor short_data = T({1, 2}, {1});
  EXPECT_THROW(RunReference(g, {{"x", short_data}}), InputError);
  // Extra tensors are ignored.
  EXPECT_NO_THROW(RunReference(g, {{"x", T({1, 2}, {1, 2})}, {"unused", T({1}, {0})}}));
}

TEST(RefInterpreter, UnverifiableGraphIsAnInputError) {
  Graph g = ReluThenNeg();
  g.nodes[1].inputs = {"nowhere"};
  EXPECT_THROW(RunReference(g, {{"x", T({1, 2}, {1, 2})}}), InputError);
}

TEST(RefInterpreter, OutputsOrAllValues) {
  const Graph g = ReluThenNeg();
  const TensorMap in = {{"x", T({1, 2}, {-3, 4})}};
  RefTensorMap outs = RunReference(g, in);
  ASSERT_EQ(outs.size(), 1u);
  ExpectValues(outs.at("b"), {1, 2}, {0, -4});
  ExpectMags(outs.at("b"), {3, 12});  // relu m = [3, 8]; Mul: m*|-1| + |a|*|-1|
  RefTensorMap all = RunReference(g, in, true);
  ASSERT_EQ(all.size(), 3u);
  ExpectValues(all.at("x"), {1, 2}, {-3, 4});
  ExpectValues(all.at("a"), {1, 2}, {0, 4});
}

// Conv (M = 3, pads, stride) followed by the unfused epilogue ops, vs one FusedConv.
void CheckFusedEqualsUnfused(Op act, AttrMap act_attrs, ParamMap act_params, Shape residual) {
  const Tensor w = Noise({3, 2, 3, 3}, 1), b = Noise({3}, 2);
  const Tensor scale = Noise({3}, 3), shift = Noise({3}, 4);
  AttrMap conv_attrs = {{"pads", Ints{1, 0, 2, 1}}, {"strides", Ints{1, 2}}};
  const TensorMap in = {{"x", Noise({2, 2, 5, 6}, 5)}, {"r", Noise(residual, 6)}};
  const Shape out_shape = {2, 3, 6, 3};

  Graph unfused;
  unfused.inputs = {{"x", {2, 2, 5, 6}}, {"r", residual}};
  unfused.nodes = {Wire(MakeNode(Op::Conv, conv_attrs, {{"W", w}, {"B", b}}), {"x"}, "c"),
                   Wire(MakeNode(Op::Mul, {}, {{"B", T({1, 3, 1, 1}, scale.data)}}), {"c"}, "s"),
                   Wire(MakeNode(Op::Add, {}, {{"B", T({1, 3, 1, 1}, shift.data)}}), {"s"}, "t"),
                   Wire(MakeNode(Op::Add), {"t", "r"}, "u"),
                   Wire(MakeNode(act, act_attrs, act_params), {"u"}, "v"),
                   Wire(MakeNode(Op::Clip, {{"min", -0.75}, {"max", 1.25}}), {"v"}, "y")};
  unfused.outputs = {"y"};

  Graph fused;
  fused.inputs = unfused.inputs;
  Node f = Wire(MakeNode(Op::FusedConv, conv_attrs, {{"W", w}, {"B", b}}), {"x", "r"}, "y");
  EpilogueStep ss;
  ss.kind = EpilogueKind::kScaleShift;
  ss.params = {{"scale", scale}, {"shift", shift}};
  EpilogueStep add;
  add.kind = EpilogueKind::kAdd;
  add.input = 1;
  EpilogueStep activation;
  activation.kind = EpilogueKind::kActivation;
  activation.act = act;
  activation.attrs = act_attrs;
  activation.params = act_params;
  EpilogueStep clamp;
  clamp.kind = EpilogueKind::kClamp;
  clamp.attrs = {{"min", -0.75}, {"max", 1.25}};
  f.epilogue = {ss, add, activation, clamp};
  fused.nodes = {f};
  fused.outputs = {"y"};

  const RefTensor a = RunReference(unfused, in).at("y");
  const RefTensor c = RunReference(fused, in).at("y");
  ASSERT_EQ(a.shape, out_shape);
  ASSERT_EQ(c.shape, out_shape);
  EXPECT_EQ(a.value, c.value) << OpName(act);  // bit-for-bit: same double operations
  int clamped = 0;
  for (size_t i = 0; i < a.value.size(); ++i) {
    clamped += a.value[i] == -0.75 || a.value[i] == 1.25;
    // The scale_shift rule (|s|*m + |t|) is never looser than Mul-then-Add's.
    EXPECT_LE(c.mag[i], a.mag[i]);
    EXPECT_GE(c.mag[i], std::fabs(c.value[i]));
  }
  EXPECT_GT(clamped, 0);  // the clamp did something
  EXPECT_LT(clamped, static_cast<int>(a.value.size()));
}

TEST(RefInterpreter, FusedConvEqualsUnfusedSequence) {
  CheckFusedEqualsUnfused(Op::PRelu, {}, {{"slope", T({3, 1, 1}, {0.25f, -0.5f, 2})}},
                          {2, 3, 6, 3});
  CheckFusedEqualsUnfused(Op::LeakyRelu, {{"alpha", 0.1}}, {}, {1, 3, 1, 1});
  CheckFusedEqualsUnfused(Op::Gelu, {{"approximate", std::string("tanh")}}, {}, {2, 3, 6, 3});
  CheckFusedEqualsUnfused(Op::HardSwish, {}, {}, {3});
}

TEST(RefInterpreter, MagnitudeCoversValueEverywhere) {
  // A graph touching every op family, with cancellation-prone sums and a few zeros.
  Graph g;
  g.inputs = {{"x", {1, 4, 6, 6}}, {"z", {1, 4, 1, 1}}};
  AttrMap pool = {{"kernel_shape", Ints{3, 3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}},
                  {"ceil_mode", int64_t{1}}};
  AttrMap avg = pool;
  avg["count_include_pad"] = int64_t{1};
  g.nodes = {Wire(MakeNode(Op::Pad, {{"pads", Ints{1, 1, 0, 2}}, {"mode", std::string("reflect")}}),
                  {"x"}, "p"),
             Wire(MakeNode(Op::Conv, {{"group", int64_t{2}}}, {{"W", Noise({4, 2, 3, 3}, 11)}}),
                  {"p"}, "c"),
             Wire(MakeNode(Op::BatchNorm, {},
                           {{"scale", Noise({4}, 12)},
                            {"bias", Noise({4}, 13)},
                            {"mean", Noise({4}, 14)},
                            {"var", T({4}, {0.5f, 1, 0, 2})}}),
                  {"c"}, "bn"),
             Wire(MakeNode(Op::Elu), {"bn"}, "e"),
             Wire(MakeNode(Op::Sub), {"e", "z"}, "d"),
             Wire(MakeNode(Op::MaxPool, pool), {"d"}, "mp"),
             Wire(MakeNode(Op::AvgPool, avg), {"d"}, "ap"),
             Wire(MakeNode(Op::Concat), {"mp", "ap"}, "cat"),
             Wire(MakeNode(Op::GroupNorm, {{"num_groups", int64_t{4}}},
                           {{"scale", Noise({8}, 15)}, {"bias", Noise({8}, 16)}}),
                  {"cat"}, "gn"),
             Wire(MakeNode(Op::Div, {}, {{"A", T({1}, {0.5f})}}), {"gn"}, "q"),
             Wire(MakeNode(Op::Silu), {"q"}, "s"),
             Wire(MakeNode(Op::LayerNorm, {{"axis", int64_t{2}}},
                           {{"scale", Noise({3, 4}, 17)}, {"bias", Noise({3, 4}, 18)}}),
                  {"s"}, "ln"),
             Wire(MakeNode(Op::Mul), {"ln", "ln"}, "m2"),
             Wire(MakeNode(Op::GlobalAvgPool), {"m2"}, "y")};
  g.outputs = {"y", "ln"};
  const RefTensorMap all =
      RunReference(g, {{"x", Noise({1, 4, 6, 6}, 9)}, {"z", Noise({1, 4, 1, 1}, 10)}}, true);
  ASSERT_EQ(all.size(), g.nodes.size() + 2);
  for (const auto& [name, t] : all) {
    for (size_t i = 0; i < t.value.size(); ++i) {
      ASSERT_TRUE(std::isfinite(t.value[i])) << name << "[" << i << "]";
      ASSERT_TRUE(std::isfinite(t.mag[i])) << name << "[" << i << "]";
      EXPECT_GE(t.mag[i], std::fabs(t.value[i])) << name << "[" << i << "]";
    }
  }
}

TEST(RefInterpreter, ToFloatTensorRoundsAndSaturates) {
  RefTensor t;
  t.shape = {7};
  const double half_ulp_below_inf = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  t.value = {0.1,  1e300,       -1e300, std::nextafter(half_ulp_below_inf, 0.0), half_ulp_below_inf,
             -0.0, std::nan("")};
  t.mag.assign(7, 0.0);
  const Tensor f = ToFloatTensor(t);
  ASSERT_EQ(f.shape, Shape{7});
  EXPECT_EQ(f.data[0], 0.1f);
  EXPECT_EQ(f.data[1], HUGE_VALF);
  EXPECT_EQ(f.data[2], -HUGE_VALF);
  EXPECT_EQ(f.data[3], FLT_MAX);
  EXPECT_EQ(f.data[4], HUGE_VALF);
  EXPECT_TRUE(std::signbit(f.data[5]));
  EXPECT_TRUE(std::isnan(f.data[6]));
}

}  // namespace
}  // namespace fusefuzz::reftest
