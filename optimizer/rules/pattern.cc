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
