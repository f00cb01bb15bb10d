#include "optimizer/rules/pattern.h"

#include <cmath>
#include <limits>

namespace fusefuzz {

std::string SoleUseProblem(const Graph& g, const std::string& value, int consumer) {
  if (g.IsGraphOutput(value)) return "'" + value + "' is a graph output";
  std::vector<int> users = g.Consumers(value);
  if (users.size() != 1 || users[0] != consumer) {
    return "'" + value + "' has " + std::to_string(users.size()) + " consumers";
  }
  const Node& n = g.nodes[static_cast<size_t>(consumer)];
  int uses = 0;
  for (const auto& in : n.inputs) uses += in == value ? 1 : 0;
  if (uses != 1) return "'" + value + "' is used " + std::to_string(uses) + " times by one node";
  return "";
}

int ProducerOfInput(const Graph& g, const Node& n, size_t input) {
  if (input >= n.inputs.size()) return -1;
  return g.ProducerIndex(n.inputs[input]);
}

const Tensor* FindParam(const Node& n, const std::string& name) {
  auto it = n.params.find(name);
  return it == n.params.end() ? nullptr : &it->second;
}

int64_t ConvOutChannels(const Node& conv) { return FindParam(conv, "W")->shape[0]; }

std::string ChannelConstProblem(const Tensor& c, int64_t m, std::vector<double>* per_channel) {
  const Shape& s = c.shape;
  if (s.empty() || s.size() > 4) return "constant of rank " + std::to_string(s.size());
  bool scalar = true;
  for (int64_t d : s) scalar &= d == 1;
  per_channel->assign(static_cast<size_t>(m), 0.0);
  if (scalar) {
    per_channel->assign(static_cast<size_t>(m), static_cast<double>(c.data[0]));
    return "";
  }
  // Right-aligned against [N, M, H, W]: the channel axis is dim rank-3 of the constant.
  if (s.size() < 3) {
    return "constant " + ShapeToString(s) + " broadcasts along W, not per channel";
  }
  const size_t ch = s.size() - 3;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != ch && s[i] != 1) return "constant " + ShapeToString(s) + " is not per channel";
  }
  if (s[ch] != m) {
    return "constant " + ShapeToString(s) + " has " + std::to_string(s[ch]) +
           " channels, conv has " + std::to_string(m);
  }
  for (int64_t i = 0; i < m; ++i) (*per_channel)[size_t(i)] = c.data[size_t(i)];
  return "";
}

std::string BnAffine(const Node& bn, std::vector<double>* s, std::vector<double>* t) {
  const double eps = AttrFloat(bn, "epsilon");
  std::vector<double> scale = ParamAsDouble(bn, "scale"), bias = ParamAsDouble(bn, "bias"),
                      mean = ParamAsDouble(bn, "mean"), var = ParamAsDouble(bn, "var");
  s->resize(scale.size());
  t->resize(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) {
    double denom = std::sqrt(var[c] + eps);
    if (!(denom > 0)) {
      return "BatchNorm '" + bn.name + "' channel " + std::to_string(c) + " has var + eps == 0";
    }
    (*s)[c] = scale[c] / denom;
    (*t)[c] = bias[c] - mean[c] * (*s)[c];
  }
  return "";
}

bool ToFloat(const std::vector<double>& v, Shape shape, Tensor* out) {
  out->shape = std::move(shape);
  out->data.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    float f = static_cast<float>(v[i]);
    if (!std::isfinite(f)) return false;
    out->data[i] = f;
  }
  return true;
}

std::vector<double> ParamAsDouble(const Node& n, const std::string& name) {
  const Tensor* t = FindParam(n, name);
  if (!t) return {};
  return std::vector<double>(t->data.begin(), t->data.end());
}

ShapeMap ValueShapes(const Graph& g) { return VerifyGraph(g); }

}  // namespace fusefuzz

namespace fusefuzz {

std::string ConvConstBinaryProblem(const Graph& g, int anchor, ConvConstBinary* out) {
  const Node& n = g.nodes[static_cast<size_t>(anchor)];
  BinaryOperands ops = GetBinaryOperands(n);
  if (!ops.const_a == !ops.const_b) {
    return ops.const_a ? "both operands are constants" : "no operand is a constant";
  }
  out->constant_is_b = ops.const_b != nullptr;
  out->constant = ops.const_b ? ops.const_b : ops.const_a;
  out->conv = ProducerOfInput(g, n, 0);
  if (out->conv < 0 || g.nodes[size_t(out->conv)].op != Op::Conv) {
    return "value operand is not produced by a Conv";
  }
  const Node& conv = g.nodes[size_t(out->conv)];
  if (auto why = SoleUseProblem(g, conv.output, anchor); !why.empty()) return why;
  return ChannelConstProblem(*out->constant, ConvOutChannels(conv), &out->channel);
}

}  // namespace fusefuzz

namespace fusefuzz {

std::string BnConvProblem(const Graph& g, int anchor, int* bn) {
  const Node& conv = g.nodes[static_cast<size_t>(anchor)];
  if (!IsConvLike(conv.op)) return "anchor is not a Conv or FusedConv";
  *bn = ProducerOfInput(g, conv, 0);
  if (*bn < 0 || g.nodes[size_t(*bn)].op != Op::BatchNorm) {
    return "conv input is not produced by a BatchNorm";
  }
  return SoleUseProblem(g, g.nodes[size_t(*bn)].output, anchor);
}

std::string FoldBnIntoConv(const Node& conv, const std::vector<double>& s,
                           const std::vector<double>& t, Tensor* w_out, Tensor* b_out) {
  const Tensor& w = *FindParam(conv, "W");
  const int64_t m = w.shape[0], cg = w.shape[1], khw = w.shape[2] * w.shape[3];
  const int64_t m_per_group = m / GetConvAttrs(conv).group;
  std::vector<double> b = ParamAsDouble(conv, "B");
  if (b.empty()) b.assign(size_t(m), 0.0);
  std::vector<double> w2(w.data.size());
  for (int64_t o = 0; o < m; ++o) {
    const int64_t grp = o / m_per_group;
    double shift = 0;
    for (int64_t ci = 0; ci < cg; ++ci) {
      const size_t c = size_t(grp * cg + ci);
      for (int64_t k = 0; k < khw; ++k) {
        const size_t idx = size_t((o * cg + ci) * khw + k);
        w2[idx] = double(w.data[idx]) * s[c];
        shift += double(w.data[idx]) * t[c];
      }
    }
    b[size_t(o)] += shift;
  }
  if (!ToFloat(w2, w.shape, w_out) || !ToFloat(b, {m}, b_out)) {
    return "folded weights or bias overflow float32";
  }
  return "";
}

void ReplaceBnConvByFolded(Rewriter& rw, int bn, int conv, Tensor w, Tensor b) {
  Node fused = rw.node(conv);
  fused.params["W"] = std::move(w);
  fused.params["B"] = std::move(b);
  fused.inputs[0] = rw.node(bn).inputs[0];
  rw.ReplaceNode(conv, std::move(fused));
  rw.EraseNode(bn);
}

MatchResultOf<Tensor> ConvBiasShiftMatch(const Graph& g, int anchor, const ConvConstBinary& cb,
                                         double sign) {
  const Node& conv = g.nodes[size_t(cb.conv)];
  const int64_t m = ConvOutChannels(conv);
  std::vector<double> b = ParamAsDouble(conv, "B");
  if (b.empty()) b.assign(size_t(m), 0.0);
  for (int64_t o = 0; o < m; ++o) b[size_t(o)] += sign * cb.channel[size_t(o)];
  Tensor bias;
  if (!ToFloat(b, {m}, &bias)) return NoMatch("shifted bias overflows float32");
  return MakeMatch({cb.conv, anchor}, std::move(bias));
}

void ReplaceBinaryByBiasedConv(Rewriter& rw, int conv, int binary, Tensor bias) {
  Node fused = rw.node(conv);
  fused.params["B"] = std::move(bias);
  fused.output = rw.node(binary).output;
  rw.ReplaceNode(binary, std::move(fused));
  rw.EraseNode(conv);
}

std::string PadConvProblem(const Graph& g, int anchor, int* pad) {
  const Node& conv = g.nodes[static_cast<size_t>(anchor)];
  if (!IsConvLike(conv.op)) return "anchor is not a Conv or FusedConv";
  *pad = ProducerOfInput(g, conv, 0);
  if (*pad < 0 || g.nodes[size_t(*pad)].op != Op::Pad) return "conv input is not a Pad";
  return SoleUseProblem(g, g.nodes[size_t(*pad)].output, anchor);
}

std::vector<int64_t> SummedPads(const Node& pad, const Node& conv) {
  std::vector<int64_t> pads = AttrInts(conv, "pads"), extra = AttrInts(pad, "pads");
  for (size_t i = 0; i < 4; ++i) pads[i] += extra[i];
  return pads;
}

void FoldPadIntoConv(Rewriter& rw, int pad, int conv, std::vector<int64_t> pads) {
  rw.SetInput(conv, 0, rw.node(pad).inputs[0]);
  rw.SetAttr(conv, "pads", std::move(pads));
  rw.EraseNode(pad);
}

// Also refuses a PRelu whose slope varies along N, H or W: the pool changes H and W.
std::string ActivationMaxPoolProblem(const Graph& g, int anchor, int* act) {
  const Node& pool = g.nodes[static_cast<size_t>(anchor)];
  if (pool.op != Op::MaxPool) return "anchor is not a MaxPool";
  *act = ProducerOfInput(g, pool, 0);
  if (*act < 0 || !IsActivation(g.nodes[size_t(*act)].op)) {
    return "MaxPool input is not produced by an activation";
  }
  const Node& a = g.nodes[size_t(*act)];
  if (a.op == Op::PRelu) {
    // MaxPool changes H and W but keeps N and C: only a slope that varies along C alone (or not
    // at all) means the same after the swap. Against the rank-4 input, right-aligned.
    const Shape& s = a.params.at("slope").shape;
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] != 1 && d + 4 - s.size() != 1) return "PRelu slope varies along N, H or W";
    }
  }
  return SoleUseProblem(g, a.output, anchor);
}

void SwapActivationAndPool(Rewriter& rw, int act_index, int pool_index) {
  Node act = rw.node(act_index), pool = rw.node(pool_index);
  const std::string pooled = rw.FreshValueName(pool.output + "_pooled");
  const std::string y = pool.output;
  pool.inputs = {act.inputs[0]};
  pool.output = pooled;
  act.inputs = {pooled};
  act.output = y;
  rw.ReplaceNode(act_index, std::move(pool));
  rw.ReplaceNode(pool_index, std::move(act));
}

EpilogueStep ActivationStep(const Node& act, Op host) {
  EpilogueStep s;
  s.kind = EpilogueKind::kActivation;
  s.act = act.op;
  s.attrs = act.attrs;
  s.params = act.params;
  if (auto it = s.params.find("slope"); it != s.params.end()) {
    const int64_t c = it->second.size();
    it->second.shape = c == 1 || host != Op::FusedConv ? Shape{c} : Shape{c, 1, 1};
  }
  return s;
}

void AppendEpilogueStep(Rewriter& rw, int producer, int consumer, Op host, EpilogueStep step) {
  Node fused = rw.node(producer);
  fused.op = host;
  fused.epilogue.push_back(std::move(step));
  fused.output = rw.node(consumer).output;
  rw.ReplaceNode(consumer, std::move(fused));
  rw.EraseNode(producer);
}

}  // namespace fusefuzz
