#include "generators/gen_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "ir/verifier.h"

namespace fusefuzz::gen {
namespace {
// snprintf rather than "n" + std::to_string(i): the latter trips a g++ 12 -Wrestrict false
// positive once inlined.
std::string Name(char prefix, int i) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%c%d", prefix, i);
  return buf;
}
}  // namespace

const std::vector<float>& KinkValues() {
  // ReLU/clip at 0, ReLU6 at 6, HardSwish at +-3, HardSigmoid(0.2, 0.5) at +-2.5, Clip(-1, 1).
  static const std::vector<float> kinks = {0.0f,  6.0f, -6.0f, 3.0f, -3.0f, 1.0f,
                                           -1.0f, 2.5f, -2.5f, 0.5f, -0.5f};
  return kinks;
}

std::string Builder::AddInput(const Shape& s, InputKind kind) {
  std::string name = Name('x', next_input_++);
  g_.inputs.push_back({name, s});
  shapes_[name] = s;
  values_.push_back(name);
  inputs_[name] = InputTensor(s, kind);
  return name;
}

std::string Builder::AddNode(Op op, std::vector<std::string> ins, AttrMap attrs, ParamMap params,
                             std::vector<EpilogueStep> epilogue) {
  Node n;
  n.name = Name('n', next_node_++);
  n.op = op;
  n.inputs = std::move(ins);
  n.output = Name('v', next_value_++);
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  n.epilogue = std::move(epilogue);
  std::vector<Shape> in_shapes;
  for (const auto& i : n.inputs) in_shapes.push_back(shapes_.at(i));
  // Shape inference, not validation by rejection: parameters were chosen to be valid, and a
  // throw here is a generator bug that the tests catch.
  shapes_[n.output] = InferNodeShape(n, in_shapes);
  values_.push_back(n.output);
  std::string out = n.output;
  g_.nodes.push_back(std::move(n));
  return out;
}

void Builder::RemoveNodesFrom(size_t first) {
  while (g_.nodes.size() > first) {
    const std::string v = g_.nodes.back().output;
    shapes_.erase(v);
    values_.erase(std::remove(values_.begin(), values_.end(), v), values_.end());
    g_.nodes.pop_back();
  }
}

void Builder::PruneDeadNodes() {
  std::set<std::string> live(g_.outputs.begin(), g_.outputs.end());
  std::vector<bool> keep(g_.nodes.size(), false);
  for (size_t i = g_.nodes.size(); i-- > 0;) {
    if (!live.count(g_.nodes[i].output)) continue;
    keep[i] = true;
    for (const auto& in : g_.nodes[i].inputs) live.insert(in);
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(g_.nodes[i]));
    } else {
      shapes_.erase(g_.nodes[i].output);
      values_.erase(std::remove(values_.begin(), values_.end(), g_.nodes[i].output), values_.end());
    }
  }
  g_.nodes = std::move(kept);
}

Tensor Builder::UniformTensor(const Shape& s, double lo, double hi) {
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  Tensor t(s);
  for (float& v : t.data) v = static_cast<float>(sub.Uniform(lo, hi));
  return t;
}

Tensor Builder::AwayFromZero(const Shape& s) {
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  Tensor t(s);
  for (float& v : t.data) {
    v = static_cast<float>(sub.Uniform(0.5, 2.0));
    if (sub.Bool(0.5)) v = -v;
  }
  return t;
}

Tensor Builder::InputTensor(const Shape& s, InputKind kind) {
  if (kind == InputKind::kAwayFromZero) return AwayFromZero(s);
  const GenValues& gv = cfg_.values;
  std::vector<double> w;
  for (const auto& [scale, weight] : gv.input_scales) w.push_back(weight);
  double scale = gv.input_scales[src_.Pick(w)].first;
  bool positive = src_.Bool(gv.positive_input);
  bool specials = cfg_.allow_nan_inf && src_.Bool(cfg_.probabilities.nan_inf_input);
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  const auto& kinks = KinkValues();
  Tensor t(s);
  for (float& v : t.data) {
    double u = sub.Unit();
    if (u < gv.exact_zero) {
      v = 0.0f;
    } else if (u < gv.exact_zero + gv.kink_value) {
      v = kinks[static_cast<size_t>(sub.Int(0, static_cast<int64_t>(kinks.size()) - 1))];
      if (positive) v = std::fabs(v);
    } else {
      v = static_cast<float>(scale * (positive ? sub.Uniform(0, 1) : sub.Uniform(-1, 1)));
    }
    if (specials && sub.Bool(gv.nan_inf)) {
      switch (sub.Int(0, 2)) {
        case 0:
          v = std::numeric_limits<float>::quiet_NaN();
          break;
        case 1:
          v = std::numeric_limits<float>::infinity();
          break;
        default:
          v = -std::numeric_limits<float>::infinity();
      }
    }
  }
  return t;
}

Tensor Builder::ConvWeights(const Shape& s, int64_t fan_in) {
  double a = std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(fan_in, 1)));
  bool special = src_.Bool(cfg_.probabilities.special_weights);
  SeededSource sub(static_cast<uint64_t>(src_.Int(0, std::numeric_limits<int64_t>::max())));
  Tensor t(s);
  for (float& v : t.data) {
    v = static_cast<float>(sub.Uniform(-a, a));
    if (special) {
      // Exact zeros and powers of two make folded products exact, exposing order changes.
      switch (sub.Int(0, 3)) {
        case 0:
          v = 0.0f;
          break;
        case 1:
          v = std::ldexp(1.0f, static_cast<int>(sub.Int(-3, 1))) * (sub.Bool(0.5) ? -1 : 1);
          break;
        default:
          break;
      }
    }
  }
  return t;
}

Tensor Builder::Bias(int64_t m) {
  double scale = src_.Bool(cfg_.probabilities.large_bias) ? 100.0 : 1.0;
  return UniformTensor({m}, -scale, scale);
}

std::vector<std::string> Builder::ValuesWithShape(const Shape& s) const {
  std::vector<std::string> out;
  for (const auto& v : values_)
    if (shapes_.at(v) == s) out.push_back(v);
  return out;
}

std::optional<Op> Builder::PickActivationUniform() {
  std::vector<Op> acts;
  for (Op op : cfg_.allowed_ops)
    if (IsActivation(op)) acts.push_back(op);
  if (acts.empty()) return std::nullopt;
  return acts[static_cast<size_t>(src_.Int(0, int64_t(acts.size()) - 1))];
}

bool Builder::AnyActivation() {
  for (Op op : cfg_.allowed_ops)
    if (IsActivation(op)) return true;
  return false;
}

std::optional<Op> Builder::PickActivation() {
  std::vector<Op> acts;
  std::vector<double> w;
  double total = 0;
  for (Op op : cfg_.allowed_ops) {
    if (!IsActivation(op)) continue;
    acts.push_back(op);
    w.push_back(cfg_.op_weights.count(op) ? cfg_.op_weights.at(op) : 0.0);
    total += w.back();
  }
  if (acts.empty()) return std::nullopt;
  if (!(total > 0)) std::fill(w.begin(), w.end(), 1.0);  // patterns still need one
  return acts[src_.Pick(w)];
}

}  // namespace fusefuzz::gen
