#include "generators/coverage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/broadcast.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

struct AttrDef {
  const char* subject;
  const char* axis;
  const char* value;
  const char* doc;
};
constexpr AttrDef kAttrs[] = {
#define FF_COV_ATTR(subject, axis, value, doc) {#subject, #axis, #value, doc},
#include "generators/coverage.def"
};
struct KeyDef {
  const char* key;
  const char* doc;
};
constexpr KeyDef kConvConsumers[] = {
#define FF_COV_CONV_CONSUMER(key, doc) {#key, doc},
#include "generators/coverage.def"
};
constexpr const char* kBinaryOps[] = {
#define FF_COV_BINARY(op) #op,
#include "generators/coverage.def"
};
constexpr KeyDef kMasks[] = {
#define FF_COV_MASK(name, doc) {#name, doc},
#include "generators/coverage.def"
};
constexpr KeyDef kSigns[] = {
#define FF_COV_SIGN(name, doc) {#name, doc},
#include "generators/coverage.def"
};
constexpr KeyDef kGroups[] = {
#define FF_COV_GROUP(name, doc) {#name, doc},
#include "generators/coverage.def"
};
struct PairDef {
  const char* producer;
  const char* consumer;
};
constexpr PairDef kPairs[] = {
#define FF_COV_PAIR(producer, consumer) {#producer, #consumer},
#include "generators/coverage.def"
};
constexpr KeyDef kMotifs[] = {
#define FF_COV_MOTIF(name, doc) {#name, doc},
#include "generators/coverage.def"
};
constexpr KeyDef kQuantClasses[] = {
#define FF_COV_QUANT(name, doc) {#name, doc},
#include "generators/coverage.def"
};

// "Act*" stands for every activation op, one class each.
std::vector<std::string> ExpandKey(const std::string& key) {
  if (key != "Act*") return {key};
  std::vector<std::string> out;
  for (Op op : AllOps()) {
    if (IsActivation(op)) out.emplace_back(OpName(op));
  }
  return out;
}

const std::set<std::string>& KnownIds() {
  static const std::set<std::string> ids = [] {
    std::set<std::string> s;
    for (const auto& c : AllCoverageClasses()) s.insert(c.id);
    return s;
  }();
  return ids;
}

// ---- per-node attribute tags ("axis=value") ----

std::vector<std::string> ConvTags(const Node& n, const ShapeMap& shapes) {
  std::vector<std::string> t;
  const ConvAttrs a = GetConvAttrs(n);
  const Shape& x = shapes.at(n.inputs[0]);
  const Shape& w = n.params.at("W").shape;
  const int64_t c = x[1], m = w[0], kh = w[2], kw = w[3];
  const int64_t eh = a.dilation_h * (kh - 1) + 1, ew = a.dilation_w * (kw - 1) + 1;
  if (a.stride_h == 1 && a.stride_w == 1) {
    t.push_back("stride=1");
  } else if (a.stride_h > eh || a.stride_w > ew) {
    t.push_back("stride=gt_kernel");
  } else {
    t.push_back("stride=gt1");
  }
  t.push_back(a.dilation_h > 1 || a.dilation_w > 1 ? "dilation=gt1" : "dilation=1");
  const bool padded = a.pad_top || a.pad_left || a.pad_bottom || a.pad_right;
  if (!padded) {
    t.push_back("pads=none");
  } else {
    t.push_back(a.pad_top == a.pad_bottom && a.pad_left == a.pad_right ? "pads=symmetric"
                                                                       : "pads=asymmetric");
    if (std::max(a.pad_top, a.pad_bottom) >= eh || std::max(a.pad_left, a.pad_right) >= ew) {
      t.push_back("pads=ge_kernel");
    }
  }
  if (a.group == 1) {
    t.push_back("group=1");
  } else if (a.group == c && c > 1) {
    t.push_back(m == c ? "group=depthwise" : "group=depthwise_mult");
  } else {
    t.push_back("group=grouped");
  }
  if (kh == 1 && kw == 1) {
    t.push_back("kernel=1x1");
    if (padded) t.push_back("kernel=1x1_padded");
  } else {
    t.push_back(kh == kw ? "kernel=square" : "kernel=non_square");
  }
  t.push_back(m == 1 ? "out_channels=1" : "out_channels=gt1");
  t.push_back(n.params.count("B") ? "bias=yes" : "bias=no");
  return t;
}

std::vector<std::string> PoolTags(const Node& n) {
  std::vector<std::string> t;
  const PoolAttrs a = GetPoolAttrs(n);
  t.push_back(a.ceil_mode ? "ceil_mode=1" : "ceil_mode=0");
  const bool padded = a.pad_top || a.pad_left || a.pad_bottom || a.pad_right;
  if (!padded) {
    t.push_back("pads=none");
  } else {
    t.push_back(a.pad_top == a.pad_bottom && a.pad_left == a.pad_right ? "pads=symmetric"
                                                                       : "pads=asymmetric");
    if (n.op == Op::AvgPool) {
      t.push_back(a.count_include_pad ? "count_include_pad=1" : "count_include_pad=0");
    }
  }
  if (a.stride_h == 1 && a.stride_w == 1) {
    t.push_back("stride=1");
  } else if (a.stride_h == a.kernel_h && a.stride_w == a.kernel_w) {
    t.push_back("stride=eq_kernel");
  } else if (a.stride_h > a.kernel_h || a.stride_w > a.kernel_w) {
    t.push_back("stride=gap");
  } else {
    t.push_back("stride=overlap");
  }
  if (a.kernel_h == 1 && a.kernel_w == 1) t.push_back("kernel=1x1");
  if (a.kernel_h != a.kernel_w) t.push_back("kernel=non_square");
  return t;
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// `x`: the shape the activation applies to.
std::vector<std::string> ActivationTags(Op op, const AttrMap& attrs, const ParamMap& params,
                                        const Shape& x, const std::string& where) {
  std::vector<std::string> t;
  switch (op) {
    case Op::Clip: {
      const double lo = AttrFloat(op, attrs, "min", where), hi = AttrFloat(op, attrs, "max", where);
      if (lo == 0 && hi == 6) {
        t.push_back("bounds=relu6");
      } else if (lo == hi) {
        t.push_back("bounds=point");
      } else if (lo > hi) {
        t.push_back("bounds=inverted");
      } else if (hi <= 0) {
        t.push_back("bounds=nonpos");
      } else if (lo >= 0) {
        t.push_back("bounds=nonneg");
      } else {
        t.push_back("bounds=straddle");
      }
      break;
    }
    case Op::LeakyRelu: {
      const double a = AttrFloat(op, attrs, "alpha", where);
      if (Near(a, 0.01)) {
        t.push_back("alpha=default");
      } else if (a == 0) {
        t.push_back("alpha=zero");
      } else if (a < 0) {
        t.push_back("alpha=negative");
      } else if (a > 1) {
        t.push_back("alpha=gt1");
      } else {
        t.push_back("alpha=other");
      }
      break;
    }
    case Op::PRelu: {
      auto it = params.find("slope");
      if (it != params.end()) {
        // Per channel ([C, 1, 1], the epilogue form), or along other dims ([W], [H, W], ...).
        const bool per_channel = AsPerChannelSlope(it->second.shape, x).has_value();
        t.push_back(it->second.size() == 1 ? "slope=scalar"
                    : per_channel          ? "slope=per_channel"
                                           : "slope=broadcast");
        for (float v : it->second.data) {
          if (v < 0) {
            t.push_back("slope=has_negative");
            break;
          }
        }
      }
      break;
    }
    case Op::Elu:
      t.push_back(AttrFloat(op, attrs, "alpha", where) == 1 ? "alpha=default" : "alpha=other");
      break;
    case Op::HardSigmoid:
      t.push_back(Near(AttrFloat(op, attrs, "alpha", where), 0.2) &&
                          Near(AttrFloat(op, attrs, "beta", where), 0.5)
                      ? "alpha_beta=default"
                      : "alpha_beta=other");
      break;
    case Op::Gelu:
      t.push_back(AttrString(op, attrs, "approximate", where) == "tanh" ? "form=tanh" : "form=erf");
      break;
    case Op::Relu:
    case Op::Relu6:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
      break;  // no parameters
    case Op::Conv:
    case Op::FusedConv:
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::Gemm:
    case Op::MatMul:
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
    case Op::QLinearConv:
    case Op::QLinearAdd:
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      break;  // not activations
  }
  return t;
}

// Attribute tags of any node ("axis=value"); subject is the node's op.
std::vector<std::string> NodeTags(const Node& n, const ShapeMap& shapes) {
  switch (FamilyOf(n.op)) {
    case OpFamily::kConv: {
      if (n.op == Op::Conv) return ConvTags(n, shapes);
      if (n.op == Op::QLinearConv) return {};  // the quantized generator's classes (issue 24)
      std::vector<std::string> t;
      if (n.epilogue.empty()) t.push_back("epilogue=empty");
      const Shape& out = shapes.at(n.output);
      for (const auto& st : n.epilogue) {
        switch (st.kind) {
          case EpilogueKind::kScaleShift:
            t.push_back("epilogue=scale_shift");
            break;
          case EpilogueKind::kAdd:
            t.push_back(shapes.at(n.inputs[size_t(st.input)]) == out ? "epilogue=add_full"
                                                                     : "epilogue=add_broadcast");
            break;
          case EpilogueKind::kActivation:
            t.push_back("epilogue=activation");
            break;
          case EpilogueKind::kClamp:
            t.push_back("epilogue=clamp");
            break;
        }
      }
      return t;
    }
    case OpFamily::kNorm: {
      std::vector<std::string> t;
      if (n.op == Op::BatchNorm) {
        const double eps = AttrFloat(n, "epsilon");
        t.push_back(Near(eps, 1e-5) ? "eps=default" : eps < 1e-5 ? "eps=small" : "eps=large");
        bool neg = false, zero = false, tiny = false, tiny_var = false;
        for (float g : n.params.at("scale").data) {
          neg |= g < 0;
          zero |= g == 0;
          tiny |= g != 0 && std::fabs(g) < 1e-4f;
        }
        for (float v : n.params.at("var").data) tiny_var |= v < 1e-3f;
        if (neg) t.push_back("gamma=negative");
        if (zero) t.push_back("gamma=zero");
        if (tiny) t.push_back("gamma=tiny");
        if (tiny_var) t.push_back("var=tiny");
      } else if (n.op == Op::LayerNorm) {
        int64_t a = AttrInt(n, "axis");
        if (a < 0) a += 4;
        t.push_back("axis=" + std::to_string(a));
      } else if (n.op == Op::GroupNorm) {
        const int64_t g = AttrInt(n, "num_groups"), c = shapes.at(n.inputs[0])[1];
        t.push_back(g == 1 ? "groups=1" : g == c ? "groups=C" : "groups=between");
      }
      return t;
    }
    case OpFamily::kActivation:
      return ActivationTags(n.op, n.attrs, n.params, shapes.at(n.inputs[0]), n.name);
    case OpFamily::kPad: {
      std::vector<std::string> t;
      const std::string mode = AttrString(n, "mode");
      if (mode != "constant") {
        t.push_back("fill=" + mode);
      } else {
        const double v = AttrFloat(n, "value");
        t.push_back(v == 0 ? (std::signbit(v) ? "fill=neg_zero" : "fill=zero")
                           : (v > 0 ? "fill=positive" : "fill=negative"));
      }
      const auto p = AttrInts(n, "pads");
      t.push_back(p[0] == p[2] && p[1] == p[3] ? "pads=symmetric" : "pads=asymmetric");
      return t;
    }
    case OpFamily::kPool:
      if (n.op == Op::GlobalAvgPool) return {};
      return PoolTags(n);
    case OpFamily::kConcat:
      if (shapes.at(n.inputs[0]).size() > 1) {
        int64_t a = AttrInt(n, "axis");
        if (a < 0) a += static_cast<int64_t>(shapes.at(n.inputs[0]).size());
        return {"axis=" + std::to_string(a)};
      }
      return {};
    case OpFamily::kGemm: {
      if (n.op == Op::MatMul) return {};
      std::vector<std::string> t;
      const GemmDims d = GetGemmDims(n, shapes.at(n.inputs[0]));
      t.push_back(d.trans_b ? "transB=1" : "transB=0");
      t.push_back(n.params.count("C") ? "bias=yes" : "bias=no");
      for (const auto& st : n.epilogue) {
        t.push_back(st.kind == EpilogueKind::kClamp ? "epilogue=clamp" : "epilogue=activation");
      }
      return t;
    }
    case OpFamily::kBinary:
    case OpFamily::kIdentity:
    case OpFamily::kReshape:
    case OpFamily::kLayout:
    case OpFamily::kQuant:   // quantized classes: the quantized generator's (issue 24)
    case OpFamily::kReduce:  // the decomposed patterns' building blocks: classed by pattern
    case OpFamily::kMath:
      return {};
  }
  return {};
}

// Key of a node as a producer or consumer in pair classes.
std::string OpKey(const Node& n) {
  if (!IsBinary(n.op)) return std::string(OpName(n.op));
  const BinaryOperands b = GetBinaryOperands(n);
  return std::string(OpName(n.op)) + (b.const_a || b.const_b ? ".c" : ".v");
}

// Keys of `n` as a consumer of a Conv output (FF_COV_CONV_CONSUMER).
std::vector<std::string> ConvConsumerKeys(const Node& n) {
  if (IsActivation(n.op)) return {"Act"};
  if (n.op == Op::BatchNorm) return {"BatchNorm"};
  if (!IsBinary(n.op)) return {};
  const BinaryOperands b = GetBinaryOperands(n);
  if (!b.const_a && !b.const_b) return {std::string(OpName(n.op)) + ".v"};
  if (n.op == Op::Div && !b.const_b) return {};  // c / conv: the generator never divides by one
  return {std::string(OpName(n.op)) + ".c"};
}

std::string MaskOf(const Shape& s) {
  static const char kAxes[] = "NCHW";
  std::string m;
  const size_t off = 4 - s.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] > 1) m += kAxes[off + i];
  }
  return m.empty() ? "scalar" : m;
}

std::string GroupOf(const std::string& mask) {
  if (mask == "scalar") return "scalar";
  if (mask == "C") return "channel";
  return mask.find('N') != std::string::npos ? "batch" : "spatial";
}

std::string SignOf(const Tensor& t) {
  bool pos = false, neg = false;
  for (float v : t.data) {
    if (v == 0) return "zero";
    pos |= v > 0;
    neg |= v < 0;
  }
  return pos && neg ? "mixed" : pos ? "positive" : "negative";
}

}  // namespace

const std::vector<CoverageClass>& AllCoverageClasses() {
  static const std::vector<CoverageClass> all = [] {
    std::vector<CoverageClass> v;
    std::set<std::string> seen;
    auto add = [&](std::string id, const char* group, std::string doc) {
      if (seen.insert(id).second) v.push_back({std::move(id), group, std::move(doc)});
    };
    for (const auto& a : kAttrs) {
      add(std::string("attr/") + a.subject + "/" + a.axis + "=" + a.value, "attr", a.doc);
    }
    for (const auto& a : kAttrs) {
      if (std::string(a.subject) != "Conv") continue;
      for (const auto& c : kConvConsumers) {
        add(std::string("front/Conv:") + a.axis + "=" + a.value + ">" + c.key, "front",
            std::string(a.doc) + ", then " + c.doc);
      }
    }
    for (const char* side : {"left", "right"}) {
      for (const auto& m : kMasks) {
        add(std::string("const/") + side + "/mask=" + m.key, "const", m.doc);
      }
    }
    for (const char* op : kBinaryOps) {
      for (const char* side : {"left", "right"}) {
        const std::string base = std::string("const/") + op + "/" + side;
        for (const auto& grp : kGroups) add(base + "/group=" + grp.key, "const", grp.doc);
        for (const auto& s : kSigns) {
          // A divisor is never zero (the generator's rule; the case would be ill-conditioned).
          if (std::string(op) == "Div" && std::string(side) == "right" &&
              std::string(s.key) == "zero") {
            continue;
          }
          add(base + "/sign=" + s.key, "const", s.doc);
        }
      }
      for (int r = 1; r <= 4; ++r) {
        add(std::string("const/") + op + "/rank=" + std::to_string(r), "const",
            "constant of rank " + std::to_string(r));
      }
    }
    for (const char* op : kBinaryOps) {
      for (const auto& grp : kGroups) {
        add(std::string("conv_const/") + op + "/" + grp.key, "conv_const", grp.doc);
      }
    }
    for (const auto& p : kPairs) {
      for (const auto& prod : ExpandKey(p.producer)) {
        for (const auto& cons : ExpandKey(p.consumer)) {
          for (const char* fan : {"single", "fanout"}) {
            add("pair/" + prod + ">" + cons + "/" + fan, "pair",
                std::string(fan) == "single" ? "the value has no other use"
                                             : "the value has another consumer or is an output");
          }
        }
      }
    }
    for (const auto& m : kMotifs) add(std::string("motif/") + m.key, "motif", m.doc);
    for (const auto& q : kQuantClasses) add(std::string("quant/") + q.key, "quant", q.doc);
    return v;
  }();
  return all;
}

std::map<std::string, int64_t> ClassifyGraph(const Graph& g) {
  const ShapeMap shapes = VerifyGraph(g);
  std::map<std::string, int64_t> raw;
  auto producer = [&](const std::string& v) { return g.Producer(v); };
  auto produced_by = [&](const std::string& v, const std::function<bool(const Node&)>& pred) {
    const Node* p = producer(v);
    return p && pred(*p);
  };
  auto is_op = [](Op op) { return [op](const Node& p) { return p.op == op; }; };
  auto is_act = [](const Node& p) { return IsActivation(p.op); };
  // Strict ancestors of a value (graphs are small: a walk per query is cheap).
  auto is_ancestor = [&](const std::string& anc, const std::string& v) {
    std::vector<std::string> todo = {v};
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string cur = todo.back();
      todo.pop_back();
      const Node* p = producer(cur);
      if (!p) continue;
      for (const auto& in : p->inputs) {
        if (in == anc) return true;
        if (seen.insert(in).second) todo.push_back(in);
      }
    }
    return false;
  };
  auto has_ancestor_op = [&](const std::string& v, Op op) {
    std::vector<std::string> todo = {v};
    std::set<std::string> seen;
    while (!todo.empty()) {
      std::string cur = todo.back();
      todo.pop_back();
      const Node* p = producer(cur);
      if (!p) continue;
      if (p->op == op) return true;
      for (const auto& in : p->inputs) {
        if (seen.insert(in).second) todo.push_back(in);
      }
    }
    return false;
  };

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::string subject(OpName(n.op));
    for (const auto& t : NodeTags(n, shapes)) ++raw["attr/" + subject + "/" + t];

    // Conv attribute classes in front of each consumer of the conv output.
    if (n.op == Op::Conv) {
      const auto tags = ConvTags(n, shapes);
      for (int ci : g.Consumers(n.output)) {
        for (const auto& key : ConvConsumerKeys(g.nodes[size_t(ci)])) {
          for (const auto& t : tags) ++raw["front/Conv:" + t + ">" + key];
        }
      }
    }

    // Binary constants: broadcast mask, side, sign, rank.
    if (IsBinary(n.op)) {
      const BinaryOperands b = GetBinaryOperands(n);
      for (int side = 0; side < 2; ++side) {
        const Tensor* c = side == 0 ? b.const_a : b.const_b;
        if (!c) continue;
        const char* side_name = side == 0 ? "left" : "right";
        const std::string base = "const/" + subject + "/" + side_name;
        if (c->shape.size() >= 1 && c->shape.size() <= 4) {
          const std::string m = MaskOf(c->shape);
          ++raw[std::string("const/") + side_name + "/mask=" + m];
          ++raw[base + "/group=" + GroupOf(m)];
          ++raw["const/" + subject + "/rank=" + std::to_string(c->shape.size())];
        }
        ++raw[base + "/sign=" + SignOf(*c)];
      }
      if ((b.const_a || b.const_b) && !n.inputs.empty()) {
        if (produced_by(n.inputs[0], is_op(Op::Conv))) {
          ++raw["motif/conv_const"];
          if (n.op == Op::Sub && b.const_a) ++raw["motif/const_minus_conv"];
          const Tensor& c = b.const_a ? *b.const_a : *b.const_b;
          if (shapes.at(n.inputs[0])[1] > 1 && c.shape.size() <= 4) {
            ++raw["conv_const/" + subject + "/" + GroupOf(MaskOf(c.shape))];
          }
        }
        if (produced_by(n.inputs[0], is_act)) ++raw["motif/act_const"];
      }
    }

    // Producer -> consumer pairs, with or without fan-out.
    std::set<std::string> ins(n.inputs.begin(), n.inputs.end());
    for (const auto& v : ins) {
      const Node* p = producer(v);
      if (!p) continue;
      const bool fan = g.Consumers(v).size() >= 2 || g.IsGraphOutput(v);
      ++raw["pair/" + OpKey(*p) + ">" + OpKey(n) + (fan ? "/fanout" : "/single")];
    }

    // Pattern families.
    const std::string in0 = n.inputs.empty() ? std::string() : n.inputs[0];
    if (n.op == Op::BatchNorm) {
      if (produced_by(in0, is_op(Op::Conv))) ++raw["motif/conv_bn"];
      if (produced_by(in0, [&](const Node& p) {
            return IsActivation(p.op) && produced_by(p.inputs[0], is_op(Op::Conv));
          })) {
        ++raw["motif/conv_act_bn"];
      }
      if (produced_by(in0, [&](const Node& p) {
            return p.op == Op::BatchNorm && produced_by(p.inputs[0], is_op(Op::Conv));
          })) {
        ++raw["motif/conv_bn_bn"];
      }
    }
    if (IsActivation(n.op)) {
      if (produced_by(in0, [&](const Node& p) {
            return p.op == Op::BatchNorm && produced_by(p.inputs[0], is_op(Op::Conv));
          })) {
        ++raw["motif/conv_bn_act"];
      }
      const Node* add = producer(in0);
      if (add && add->op == Op::Add && add->inputs.size() == 2) {
        for (int k = 0; k < 2; ++k) {
          const std::string& y = add->inputs[size_t(k)];
          const std::string& x = add->inputs[size_t(1 - k)];
          if (produced_by(
                  y, [](const Node& p) { return p.op == Op::Conv || p.op == Op::BatchNorm; }) &&
              is_ancestor(x, y)) {
            ++raw["motif/residual"];
            break;
          }
        }
      }
    }
    if (n.op == Op::Conv || n.op == Op::FusedConv) {
      if (produced_by(in0, is_op(Op::BatchNorm))) ++raw["motif/bn_conv"];
      if (produced_by(in0, [&](const Node& p) {
            return p.op == Op::Pad && produced_by(p.inputs[0], is_op(Op::BatchNorm));
          })) {
        ++raw["motif/bn_pad_conv"];
      }
    }
    if (n.op == Op::Conv && g.Consumers(n.output).size() >= 2) ++raw["motif/branch"];
    if ((n.op == Op::Conv || n.op == Op::MaxPool || n.op == Op::AvgPool) &&
        produced_by(in0, is_op(Op::Pad))) {
      ++raw["motif/pad_window"];
    }
    if (n.op == Op::Mul && n.inputs.size() == 2) {
      for (const auto& v : n.inputs) {
        if (produced_by(
                v, [](const Node& p) { return p.op == Op::Sigmoid || p.op == Op::HardSigmoid; }) &&
            has_ancestor_op(v, Op::GlobalAvgPool)) {
          ++raw["motif/squeeze_excite"];
          break;
        }
      }
    }
    if (n.op == Op::Concat && n.inputs.size() >= 2) ++raw["motif/concat_branches"];
    if (!n.params.empty()) {
      for (size_t j = 0; j < i; ++j) {
        const Node& o = g.nodes[j];
        if (o.op == n.op && o.attrs == n.attrs && o.params == n.params &&
            o.epilogue == n.epilogue) {
          ++raw["motif/repeat"];
          break;
        }
      }
    }
  }
  ClassifyQuantGraph(g, &raw);
  // Only the defined classes count (e.g. pairs nobody listed, or a zero constant divisor from a
  // hand-written graph).
  std::map<std::string, int64_t> out;
  const auto& known = KnownIds();
  for (auto& [id, n] : raw) {
    if (known.count(id)) out[id] = n;
  }
  return out;
}

void CoverageTally::Add(const std::map<std::string, int64_t>& graph_counts) {
  ++graphs;
  for (const auto& [id, n] : graph_counts) {
    if (n <= 0) continue;
    occurrences[id] += n;
    ++graphs_with[id];
  }
}

double CoverageTally::Share(const std::string& id) const {
  if (graphs == 0) return 0;
  auto it = graphs_with.find(id);
  return it == graphs_with.end() ? 0.0 : double(it->second) / double(graphs);
}

namespace {

struct Row {
  const CoverageClass* c;
  int64_t count, graphs;
  double share;
  bool flagged;
};

std::vector<Row> Rows(const CoverageTally& t, const CoverageTableOptions& o) {
  std::vector<Row> rows;
  // The quantized classes only where quantized graphs were classified: a float campaign cannot
  // reach them, and 50 rows flagged low would bury its real gaps. Conversely a quantized
  // campaign lists its own classes and only the float classes its graphs reached: the float
  // generator's other 500 are no gap of the quantized generator (issue 45, item 21).
  bool quant = false;
  for (const auto& [id, n] : t.graphs_with) quant |= n > 0 && id.rfind("quant/", 0) == 0;
  for (const auto& c : AllCoverageClasses()) {
    auto oc = t.occurrences.find(c.id);
    auto gw = t.graphs_with.find(c.id);
    const bool reached = gw != t.graphs_with.end() && gw->second > 0;
    if (c.group == "quant" ? !quant : quant && !reached) continue;
    Row r{&c, oc == t.occurrences.end() ? 0 : oc->second,
          gw == t.graphs_with.end() ? 0 : gw->second, t.Share(c.id), false};
    r.flagged = r.share < o.min_share;
    rows.push_back(r);
  }
  return rows;
}

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, share > 0 && share < 0.001 ? "%.3f%%" : "%.2f%%", 100 * share);
  return buf;
}

}  // namespace

std::string RenderCoverageMarkdown(const CoverageTally& t, const CoverageTableOptions& o) {
  const auto rows = Rows(t, o);
  int64_t flagged = 0, never = 0;
  for (const auto& r : rows) {
    flagged += r.flagged;
    never += r.graphs == 0;
  }
  bool quant = false;
  for (const auto& r : rows) quant |= r.c->group == "quant";
  std::string s = "Generator coverage over " + std::to_string(t.graphs) +
                  " graphs: " + std::to_string(rows.size()) +
                  (quant ? " classes (the quantized generator's, and the float classes its "
                           "graphs reached), "
                         : " classes, ") +
                  std::to_string(flagged) + " below a share of " + Percent(o.min_share) +
                  " of graphs (**low**), " + std::to_string(never) + " never reached.\n\n";
  s += "| class | count | graphs | share | |\n|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (o.only_flagged && !r.flagged) continue;
    s += "| `" + r.c->id + "` | " + std::to_string(r.count) + " | " + std::to_string(r.graphs) +
         " | " + Percent(r.share) + " | " + (r.flagged ? "**low**" : "") + " |\n";
  }
  return s;
}

nlohmann::json CoverageToJson(const CoverageTally& t, const CoverageTableOptions& o) {
  nlohmann::json j;
  j["graphs"] = t.graphs;
  j["min_share"] = o.min_share;
  nlohmann::json classes = nlohmann::json::array(), flagged = nlohmann::json::array();
  for (const auto& r : Rows(t, o)) {
    if (r.flagged) flagged.push_back(r.c->id);
    if (o.only_flagged && !r.flagged) continue;
    classes.push_back({{"id", r.c->id},
                       {"group", r.c->group},
                       {"count", r.count},
                       {"graphs", r.graphs},
                       {"share", r.share},
                       {"flagged", r.flagged}});
  }
  j["classes"] = classes;
  j["flagged"] = flagged;
  return j;
}

}  // namespace fusefuzz
