// FusedConv: every epilogue kind (and chains of them) equals Conv followed by the separate fast
// ops within the oracle's bound, and matches the reference; step order is honoured.
#include <gtest/gtest.h>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::ExpectNearReference;
using fast_test::Inputs;
using fast_test::Random;
using fast_test::Values;

struct Geometry {
  const char* name;
  Shape x;
  int64_t m, k, group, stride, pad;
};

const Geometry kGeometries[] = {
    {"im2col", {2, 3, 7, 7}, 5, 3, 1, 1, 1},
    {"pointwise", {1, 6, 5, 7}, 4, 1, 1, 1, 0},
    {"depthwise_mult2", {1, 3, 7, 7}, 6, 3, 3, 1, 1},
    {"grouped_strided", {1, 4, 9, 9}, 6, 5, 2, 2, 2},
    {"many_blocks", {1, 3, 24, 25}, 131, 3, 1, 1, 1},  // 2 channel blocks x 2 column blocks
    // Depthwise, multiplier 1: channel blocks of 16 and a ragged one (AVX-512), epilogues run
    // once per block (position-free steps) or per plane; 9x9 planes: the flat loop (AVX2).
    {"depthwise_blocked", {2, 20, 9, 9}, 20, 3, 20, 1, 1},
    // Small 3x3 planes in registers (AVX2/AVX-512): Relu in registers, the other epilogues once
    // per batch of planes (position-free steps) or per plane.
    {"depthwise_small", {2, 20, 7, 7}, 20, 3, 20, 1, 1},
    // Rows (AVX2/AVX-512, rows of a vector or more), 3x3 and 5x5.
    {"depthwise_rows", {1, 18, 9, 20}, 18, 3, 18, 1, 1},
    {"depthwise_rows_5x5", {2, 5, 6, 17}, 5, 5, 5, 1, 2},
    {"depthwise_blocked_strided_5x5", {1, 18, 9, 9}, 18, 5, 18, 2, 2},
    // Packed kernel: rows not a multiple of the register block, positions not of the vector.
    {"packed_ragged", {1, 5, 9, 11}, 13, 3, 1, 1, 1},
};

Shape OutShape(const Geometry& g) {
  int64_t oh = (g.x[2] + 2 * g.pad - g.k) / g.stride + 1;
  int64_t ow = (g.x[3] + 2 * g.pad - g.k) / g.stride + 1;
  return {g.x[0], g.m, oh, ow};
}

Node ConvNode(const Geometry& g, Op op, uint64_t seed) {
  Node n;
  n.name = "conv";
  n.op = op;
  n.attrs["strides"] = std::vector<int64_t>{g.stride, g.stride};
  n.attrs["pads"] = std::vector<int64_t>{g.pad, g.pad, g.pad, g.pad};
  n.attrs["group"] = g.group;
  n.params["W"] = Random({g.m, g.x[1] / g.group, g.k, g.k}, seed);
  n.params["B"] = Random({g.m}, seed + 1);
  return n;
}

// The same computation twice: FusedConv with `steps`, and Conv followed by one node per step.
// kAdd steps read graph input "y" of shape `add_shape`.
struct Pair {
  Graph fused, unfused;
};
Pair Build(const Geometry& geo, const std::vector<EpilogueStep>& steps, const Shape& add_shape,
           uint64_t seed) {
  Pair p;
  bool has_add = false;
  for (const auto& s : steps) has_add |= s.kind == EpilogueKind::kAdd;
  for (Graph* g : {&p.fused, &p.unfused}) {
    g->inputs.push_back({"x", geo.x});
    if (has_add) g->inputs.push_back({"y", add_shape});
  }
  Node fc = ConvNode(geo, Op::FusedConv, seed);
  fc.inputs = {"x"};
  if (has_add) fc.inputs.push_back("y");
  fc.output = "out";
  fc.epilogue = steps;
  p.fused.nodes.push_back(fc);
  p.fused.outputs = {"out"};

  Node conv = ConvNode(geo, Op::Conv, seed);
  conv.inputs = {"x"};
  conv.output = "v0";
  p.unfused.nodes.push_back(conv);
  std::string prev = "v0";
  int k = 0;
  auto add_node = [&](Node n) {
    n.name = "s" + std::to_string(k);
    n.output = "v" + std::to_string(++k);
    prev = n.output;
    p.unfused.nodes.push_back(std::move(n));
  };
  for (const auto& s : steps) {
    Node n;
    n.inputs = {prev};
    switch (s.kind) {
      case EpilogueKind::kScaleShift: {
        n.op = Op::Mul;
        n.params["B"] = Values({1, geo.m, 1, 1}, s.params.at("scale").data);
        add_node(n);
        Node a;
        a.op = Op::Add;
        a.inputs = {prev};
        a.params["B"] = Values({1, geo.m, 1, 1}, s.params.at("shift").data);
        add_node(a);
        break;
      }
      case EpilogueKind::kAdd:
        n.op = Op::Add;
        n.inputs.push_back("y");
        add_node(n);
        break;
      case EpilogueKind::kActivation:
        n.op = s.act;
        n.attrs = s.attrs;
        n.params = s.params;
        add_node(n);
        break;
      case EpilogueKind::kClamp:
        n.op = Op::Clip;
        n.attrs = s.attrs;
        add_node(n);
        break;
    }
  }
  p.unfused.nodes.back().output = "out";
  if (p.unfused.nodes.size() == 1) p.unfused.nodes.back().name = "conv";
  p.unfused.outputs = {"out"};
  return p;
}

EpilogueStep ScaleShift(int64_t m, uint64_t seed) {
  EpilogueStep s;
  s.kind = EpilogueKind::kScaleShift;
  s.params["scale"] = Random({m}, seed, 0.25f, 2.0f);
  s.params["shift"] = Random({m}, seed + 1);
  return s;
}
EpilogueStep AddInput() {
  EpilogueStep s;
  s.kind = EpilogueKind::kAdd;
  s.input = 1;
  return s;
}
EpilogueStep Act(Op op, AttrMap attrs = {}, ParamMap params = {}) {
  EpilogueStep s;
  s.kind = EpilogueKind::kActivation;
  s.act = op;
  s.attrs = std::move(attrs);
  s.params = std::move(params);
  return s;
}
EpilogueStep Clamp(double lo, double hi) {
  EpilogueStep s;
  s.kind = EpilogueKind::kClamp;
  s.attrs = {{"min", lo}, {"max", hi}};
  return s;
}

// Fused within the bound of unfused-fast (magnitudes from the reference of the unfused graph),
// and both within the bound of the reference; threads 1 and 2 bit-identical.
void CheckPair(const Pair& p, uint64_t seed, const std::string& what) {
  ASSERT_NO_THROW(VerifyGraph(p.fused)) << what;
  TensorMap in = Inputs(p.unfused, seed);
  RefTensorMap ref = RunReference(p.unfused, in);
  Tensor fused = RunFast(p.fused, in).at("out");
  Tensor unfused = RunFast(p.unfused, in).at("out");
  ExpectNearReference(fused, ref.at("out"), what + " fused vs reference");
  ExpectNearReference(unfused, ref.at("out"), what + " unfused vs reference");
  RefTensor unfused_as_ref = ref.at("out");
  for (size_t i = 0; i < unfused.data.size(); ++i) unfused_as_ref.value[i] = unfused.data[i];
  ExpectNearReference(fused, unfused_as_ref, what + " fused vs unfused fast");
  EXPECT_TRUE(fused.BitwiseEquals(RunFast(p.fused, in, FastOptions{2}).at("out"))) << what;
}

TEST(FastFusedConv, EachEpilogueKindMatchesUnfused) {
  uint64_t seed = 1000;
  const ParamMap slope = {{"slope", Values({1}, {0.3f})}};
  for (const Geometry& geo : kGeometries) {
    const Shape out = OutShape(geo);
    const ParamMap per_channel = {{"slope", Random({geo.m, 1, 1}, seed + 5)}};
    const std::vector<std::pair<std::string, std::vector<EpilogueStep>>> cases = {
        {"none", {}},
        {"scale_shift", {ScaleShift(geo.m, seed)}},
        {"add", {AddInput()}},
        {"relu", {Act(Op::Relu)}},
        {"relu6", {Act(Op::Relu6)}},
        {"clip", {Act(Op::Clip, {{"min", -0.5}, {"max", 0.25}})}},
        {"leaky", {Act(Op::LeakyRelu, {{"alpha", 0.1}})}},
        {"prelu_scalar", {Act(Op::PRelu, {}, slope)}},
        {"prelu_channel", {Act(Op::PRelu, {}, per_channel)}},
        {"elu", {Act(Op::Elu, {{"alpha", 0.7}})}},
        {"sigmoid", {Act(Op::Sigmoid)}},
        {"hardsigmoid", {Act(Op::HardSigmoid, {{"alpha", 0.25}, {"beta", 0.4}})}},
        {"tanh", {Act(Op::Tanh)}},
        {"silu", {Act(Op::Silu)}},
        {"hardswish", {Act(Op::HardSwish)}},
        {"gelu_erf", {Act(Op::Gelu)}},
        {"gelu_tanh", {Act(Op::Gelu, {{"approximate", std::string("tanh")}})}},
        {"clamp", {Clamp(-0.75, 0.5)}},
        {"bn_add_relu", {ScaleShift(geo.m, seed + 2), AddInput(), Act(Op::Relu)}},
        {"relu_then_add_clamp", {Act(Op::Relu), AddInput(), Clamp(0.0, 6.0)}},
    };
    for (const auto& [name, steps] : cases) {
      const std::string what = std::string(geo.name) + "/" + name;
      CheckPair(Build(geo, steps, out, seed), seed + 3, what);
      seed += 10;
    }
  }
}

TEST(FastFusedConv, AddBroadcastsTheOperand) {
  uint64_t seed = 3000;
  for (const Geometry& geo : kGeometries) {
    const Shape out = OutShape(geo);
    for (const Shape& add : {Shape{out[0], geo.m, 1, 1}, Shape{1, geo.m, 1, 1},
                             Shape{1, 1, out[2], out[3]}, Shape{out[3]}, Shape{1}}) {
      const std::string what = std::string(geo.name) + "/add" + ShapeToString(add);
      CheckPair(Build(geo, {AddInput(), Act(Op::Relu)}, add, seed), seed + 1, what);
      seed += 10;
    }
  }
}

TEST(FastFusedConv, StepOrderIsHonoured) {
  // 1x1 conv with W = 1, no bias: conv(x) = x. relu-then-add and add-then-relu differ.
  Geometry geo{"id", {1, 1, 1, 2}, 1, 1, 1, 1, 0};
  auto run = [&](std::vector<EpilogueStep> steps) {
    Pair p = Build(geo, steps, {1, 1, 1, 2}, 1);
    Node& n = p.fused.nodes[0];
    n.params["W"] = Values({1, 1, 1, 1}, {1});
    n.params.erase("B");
    TensorMap in = {{"x", Values({1, 1, 1, 2}, {-2, 3})}, {"y", Values({1, 1, 1, 2}, {1, 1})}};
    return RunFast(p.fused, in).at("out").data;
  };
  EXPECT_EQ(run({Act(Op::Relu), AddInput()}), (std::vector<float>{1, 4}));
  EXPECT_EQ(run({AddInput(), Act(Op::Relu)}), (std::vector<float>{0, 4}));
  EXPECT_EQ(run({AddInput(), Clamp(-0.5, 3.5)}), (std::vector<float>{-0.5, 3.5}));
  EXPECT_EQ(run({Clamp(-0.5, 3.5), AddInput()}), (std::vector<float>{0.5, 4}));
}

TEST(FastFusedConv, ScaleShiftHandValues) {
  Geometry geo{"ss", {1, 2, 1, 1}, 2, 1, 1, 1, 0};
  EpilogueStep ss;
  ss.kind = EpilogueKind::kScaleShift;
  ss.params["scale"] = Values({2}, {2, -3});
  ss.params["shift"] = Values({2}, {0.5, 1});
  Pair p = Build(geo, {ss}, {}, 1);
  Node& n = p.fused.nodes[0];
  n.params["W"] = Values({2, 2, 1, 1}, {1, 0, 0, 1});  // identity on channels
  n.params["B"] = Values({2}, {1, 0});
  Tensor out = RunFast(p.fused, {{"x", Values({1, 2, 1, 1}, {3, 4})}}).at("out");
  EXPECT_EQ(out.data, (std::vector<float>{(3 + 1) * 2 + 0.5f, 4 * -3 + 1}));
}

}  // namespace
}  // namespace fusefuzz
