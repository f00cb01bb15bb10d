#include "bench/fusion_patterns.h"

#include <cmath>
#include <utility>

#include "ir/error.h"
#include "ir/ops.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

// ResNet-18 3x3 stages and the stage-3 1x1 stride-2 downsample; MobileNetV2 1x1 expand/project
// and depthwise 3x3 at the four resolutions named in the issue.
constexpr Layer kR2{"resnet18_conv2_x", 1, 64, 56, 64, 3, 1, 1};
constexpr Layer kR3{"resnet18_conv3_x", 1, 128, 28, 128, 3, 1, 1};
constexpr Layer kR4{"resnet18_conv4_x", 1, 256, 14, 256, 3, 1, 1};
constexpr Layer kR5{"resnet18_conv5_x", 1, 512, 7, 512, 3, 1, 1};
constexpr Layer kRDown{"resnet18_downsample", 1, 64, 56, 128, 1, 2, 1};
constexpr Layer kMExpand{"mobilenetv2_expand", 1, 24, 56, 144, 1, 1, 1};
constexpr Layer kMProject{"mobilenetv2_project", 1, 192, 28, 32, 1, 1, 1};
constexpr Layer kMDw56{"mobilenetv2_dw", 1, 144, 56, 144, 3, 1, 144};
constexpr Layer kMDw28{"mobilenetv2_dw", 1, 192, 28, 192, 3, 1, 192};
constexpr Layer kMDw14{"mobilenetv2_dw", 1, 576, 14, 576, 3, 1, 576};
constexpr Layer kMDw7{"mobilenetv2_dw", 1, 960, 7, 960, 3, 1, 960};

Layer Batch(Layer l, int64_t n) {
  l.n = n;
  return l;
}

std::string Lower(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch >= 'A' && ch <= 'Z') {
      // CamelCase -> snake_case ("LeakyRelu" -> "leaky_relu", "Relu6" -> "relu6").
      if (i > 0) out += '_';
      out += static_cast<char>(ch - 'A' + 'a');
    } else {
      out += ch;
    }
  }
  return out;
}

Node MakeNode(std::string name, Op op, std::vector<std::string> inputs) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.output = std::move(name);
  return n;
}

Node ConvNode(const Layer& l, const std::string& in, bool padded) {
  Node n = MakeNode("conv", Op::Conv, {in});
  const int64_t pad = padded ? l.k / 2 : 0;
  n.attrs["strides"] = std::vector<int64_t>{l.stride, l.stride};
  n.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  n.attrs["group"] = l.group;
  // Weights ~ 1/sqrt(fan_in) keep outputs O(1), away from denormals and saturated activations.
  const float scale = 1.0f / std::sqrt(static_cast<float>(l.c / l.group * l.k * l.k));
  n.params["W"] = Filled({l.m, l.c / l.group, l.k, l.k}, 1, scale);
  n.params["B"] = Filled({l.m}, 2, 0.1f);
  return n;
}

Node BnNode(const std::string& name, const std::string& in, int64_t ch, uint32_t seed) {
  Node n = MakeNode(name, Op::BatchNorm, {in});
  Tensor scale = Filled({ch}, seed, 0.5f);
  for (float& v : scale.data) v += 1.0f;
  Tensor var = Filled({ch}, seed + 3, 0.25f);
  for (float& v : var.data) v += 0.5f;
  n.params = {{"scale", std::move(scale)},
              {"bias", Filled({ch}, seed + 1, 0.1f)},
              {"mean", Filled({ch}, seed + 2, 0.1f)},
              {"var", std::move(var)}};
  return n;
}

Node ActNode(const PatternCase& pc, const std::string& in, int64_t ch) {
  Node n = MakeNode("act", pc.act, {in});
  if (pc.act == Op::Clip) {
    n.attrs["min"] = -1.0;
    n.attrs["max"] = 1.0;
  } else if (pc.act == Op::PRelu) {
    n.params["slope"] = Filled({ch, 1, 1}, 9, 0.25f);  // per channel (ONNX broadcasting)
  } else if (pc.act == Op::Gelu && pc.gelu_tanh) {
    n.attrs["approximate"] = std::string("tanh");
  }
  return n;
}

std::string Dims(const Layer& l) {
  // Appends one piece at a time: g++ 12 warns (-Wrestrict, a false positive) on "N" + to_string.
  std::string s;
  auto dim = [&s](const char* key, int64_t v) {
    if (!s.empty()) s += '_';
    s += key;
    s += std::to_string(v);
  };
  dim("N", l.n);
  dim("C", l.c);
  dim("H", l.h);
  if (l.m != l.c) dim("M", l.m);
  dim("K", l.k);
  if (l.stride != 1) dim("S", l.stride);
  if (l.group != 1) dim("G", l.group);
  return s;
}

}  // namespace

Tensor Filled(Shape shape, uint32_t seed, float scale) {
  Tensor t(std::move(shape));
  seed = seed * 2654435761u + 12345u;
  for (float& v : t.data) {
    seed = seed * 1664525u + 1013904223u;
    v = scale * (static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f);
  }
  return t;
}

std::string CaseName(const PatternCase& pc) {
  return "BM_Fusion/" + pc.pattern + "/" + pc.layer.model + "/" + Dims(pc.layer);
}

std::vector<PatternCase> AllCases() {
  std::vector<PatternCase> cases;
  auto add = [&](std::string pattern, PatternKind kind, Op act, const Layer& l) {
    cases.push_back({std::move(pattern), kind, act, false, l});
  };
  for (int64_t n : {1, 8}) {
    for (const Layer& l : {kR2, kR3, kR4, kR5, kRDown, kMExpand, kMProject}) {
      if (n == 8 && l.k == 3 && l.c < 256) continue;  // batch 8: a subset, to bound the run
      add("conv_bn", PatternKind::kConvBn, Op::Relu, Batch(l, n));
      add("conv_bn_relu", PatternKind::kConvBnAct, Op::Relu, Batch(l, n));
    }
    for (const Layer& l : {kMDw56, kMDw28, kMDw14, kMDw7}) {
      add("conv_bn_relu6", PatternKind::kConvBnAct, Op::Relu6, Batch(l, n));
    }
    for (const Layer& l : {kR2, kR3, kR4, kR5}) {
      if (n == 8 && l.c < 256) continue;
      add("conv_add_relu", PatternKind::kConvAddRelu, Op::Relu, Batch(l, n));
    }
  }
  for (const Layer& l : {kR3, kMExpand, kMDw28}) {
    add("conv_scale_shift", PatternKind::kConvScaleShift, Op::Relu, l);
  }
  for (const Layer& l : {kR2, kMDw56}) add("bn_bn", PatternKind::kBnBn, Op::Relu, l);
  for (const Layer& l : {kR2, kR3, kR4, kR5}) {
    add("pad_conv", PatternKind::kPadConv, Op::Relu, l);
  }
  // Every activation family after a memory-bound 1x1 conv (the epilogue's share is largest).
  for (Op act : {Op::Relu, Op::Relu6, Op::Clip, Op::LeakyRelu, Op::PRelu, Op::Elu, Op::Sigmoid,
                 Op::HardSigmoid, Op::Tanh, Op::Silu, Op::HardSwish, Op::Gelu}) {
    add("conv_act_" + Lower(OpName(act)), PatternKind::kConvAct, act, kMExpand);
  }
  cases.push_back({"conv_act_gelu_tanh", PatternKind::kConvAct, Op::Gelu, true, kMExpand});
  return cases;
}

BuiltCase BuildCase(const PatternCase& pc) {
  const Layer& l = pc.layer;
  BuiltCase bc;
  Graph& g = bc.graph;
  g.inputs.push_back({"x", {l.n, l.c, l.h, l.h}});
  switch (pc.kind) {
    case PatternKind::kConvBn:
      g.nodes = {ConvNode(l, "x", true), BnNode("bn", "conv", l.m, 20)};
      break;
    case PatternKind::kConvBnAct:
      g.nodes = {ConvNode(l, "x", true), BnNode("bn", "conv", l.m, 20), ActNode(pc, "bn", l.m)};
      break;
    case PatternKind::kConvAddRelu: {
      g.nodes = {ConvNode(l, "x", true), MakeNode("add", Op::Add, {"conv", "r"}),
                 MakeNode("act", Op::Relu, {"add"})};
      break;
    }
    case PatternKind::kConvScaleShift: {
      Node mul = MakeNode("mul", Op::Mul, {"conv"});
      Tensor s = Filled({1, l.m, 1, 1}, 30, 0.5f);
      for (float& v : s.data) v += 1.0f;
      mul.params["B"] = std::move(s);
      Node add = MakeNode("add", Op::Add, {"mul"});
      add.params["B"] = Filled({1, l.m, 1, 1}, 31, 0.1f);
      g.nodes = {ConvNode(l, "x", true), std::move(mul), std::move(add)};
      break;
    }
    case PatternKind::kBnBn:
      g.nodes = {BnNode("bn1", "x", l.c, 40), BnNode("bn2", "bn1", l.c, 50)};
      break;
    case PatternKind::kPadConv: {
      Node pad = MakeNode("pad", Op::Pad, {"x"});
      const int64_t p = l.k / 2;
      pad.attrs["pads"] = std::vector<int64_t>{p, p, p, p};
      g.nodes = {std::move(pad), ConvNode(l, "pad", false)};
      break;
    }
    case PatternKind::kConvAct:
      g.nodes = {ConvNode(l, "x", true), ActNode(pc, "conv", l.m)};
      break;
  }
  g.outputs = {g.nodes.back().output};
  if (pc.kind == PatternKind::kConvAddRelu) {
    // The residual has the conv output's shape.
    const Shape out = InferNodeShape(g.nodes[0], {g.inputs[0].shape});
    g.inputs.push_back({"r", out});
  }
  uint32_t seed = 100;
  for (const ValueInfo& vi : g.inputs) bc.inputs[vi.name] = Filled(vi.shape, seed++);
  VerifyGraph(g);
  return bc;
}

double CaseFlops(const Graph& g) {
  const ShapeMap shapes = VerifyGraph(g);
  double flops = 0;
  for (const Node& n : g.nodes) {
    const double out = static_cast<double>(NumElements(shapes.at(n.output)));
    if (n.op == Op::Conv || n.op == Op::FusedConv) {
      const Shape& w = n.params.at("W").shape;
      flops += 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
    } else if (n.op == Op::BatchNorm) {
      flops += 2.0 * out;
    } else if (n.op != Op::Pad) {
      flops += out;
    }
  }
  return flops;
}

NodeSequence::NodeSequence(const Graph& g, const TensorMap& inputs, const FastOptions& opts)
    : g_(g), inputs_(inputs), opts_(opts) {
  const ShapeMap shapes = VerifyGraph(g_);
  for (const Node& n : g_.nodes) {
    std::vector<Source> srcs;
    for (const std::string& in : n.inputs) {
      Source s;
      s.node = g_.ProducerIndex(in);
      if (s.node < 0) {
        auto it = inputs_.find(in);
        if (it == inputs_.end()) throw InputError("bench", "missing input '" + in + "'");
        s.input = &it->second;
      }
      bytes_ += 4.0 * static_cast<double>(NumElements(shapes.at(in)));
      srcs.push_back(s);
    }
    for (const auto& [name, t] : n.params) bytes_ += 4.0 * static_cast<double>(t.size());
    for (const EpilogueStep& st : n.epilogue) {
      for (const auto& [name, t] : st.params) bytes_ += 4.0 * static_cast<double>(t.size());
    }
    out_shapes_.push_back(shapes.at(n.output));
    bytes_ += 4.0 * static_cast<double>(NumElements(out_shapes_.back()));
    sources_.push_back(std::move(srcs));
  }
}

Tensor NodeSequence::Run() const {
  std::vector<Tensor> values(g_.nodes.size());
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    args.clear();
    for (const Source& s : sources_[i]) args.push_back(s.input ? s.input : &values[s.node]);
    values[i] = RunFastNode(g_.nodes[i], args, out_shapes_[i], opts_);
  }
  return std::move(values.back());
}

}  // namespace fusefuzz
