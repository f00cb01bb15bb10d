// The quantized coverage classes ("quant/..." in coverage.def): the preconditions of the real
// int8 fusion bugs, recognized in any graph (docs/generator.md "Quantized graphs").
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "generators/coverage.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

bool PowerOfTwo(double s) {
  int e = 0;
  return std::frexp(std::fabs(s), &e) == 0.5;
}

// 1-3 float32 ulps from a power of two, not one.
bool NearPowerOfTwo(double s) {
  if (PowerOfTwo(s)) return false;
  const float f = static_cast<float>(std::fabs(s));
  float up = f, down = f;
  for (int i = 0; i < 3; ++i) {
    up = std::nextafter(up, FLT_MAX);
    down = std::nextafter(down, 0.0f);
    if (PowerOfTwo(up) || PowerOfTwo(down)) return true;
  }
  return false;
}

const char* EdgeName(const QuantParams& q) {
  const int64_t z = q.zero_point[0], lo = q.qmin(), hi = q.qmax();
  const int64_t mid = (lo + hi + 1) / 2;
  if (z == lo) return "qmin";
  if (z == lo + 1) return "qmin1";
  if (z == mid) return "mid";
  if (z == hi - 1) return "qmax1";
  if (z == hi) return "qmax";
  return nullptr;
}

const QuantParams* RoleOf(const Node& n, const char* role) {
  auto it = n.quant.find(role);
  return it == n.quant.end() ? nullptr : &it->second;
}

}  // namespace

void ClassifyQuantGraph(const Graph& g, std::map<std::string, int64_t>* counts) {
  auto& raw = *counts;
  auto consumers = [&](const std::string& v) { return g.Consumers(v).size(); };
  auto is_output = [&](const std::string& v) {
    for (const auto& o : g.outputs) {
      if (o == v) return true;
    }
    return false;
  };
  auto single_consumer = [&](const std::string& v) -> const Node* {
    auto c = g.Consumers(v);
    return c.size() == 1 ? &g.nodes[size_t(c[0])] : nullptr;
  };
  for (const Node& n : g.nodes) {
    for (const auto& [role, q] : n.quant) {
      for (double s : q.scale) {
        if (PowerOfTwo(s)) ++raw["quant/scale_pow2"];
        if (NearPowerOfTwo(s)) ++raw["quant/scale_near_pow2"];
      }
    }
    const bool makes_q = ProducesQuantized(n.op);
    if (makes_q) {
      const QuantParams& y = n.quant.at("y");
      const bool i8 = y.type == QuantType::kInt8;
      ++raw[i8 ? "quant/int8_activation" : "quant/uint8_activation"];
      if (!y.PerAxis()) {
        if (const char* e = EdgeName(y)) {
          ++raw[std::string("quant/zp_") + (i8 ? "i8_" : "u8_") + e];
        }
      } else if (n.op == Op::QuantizeLinear) {
        ++raw["quant/per_axis_activation"];
      }
      if (consumers(n.output) >= 2) ++raw["quant/q_fanout"];
      if (is_output(n.output) && consumers(n.output) >= 1) ++raw["quant/q_output_consumed"];
    }
    // Classes by op, as ifs: a classifier names only the ops it knows (not an op switch).
    if (n.op == Op::DequantizeLinear) {
      if (consumers(n.output) >= 2) ++raw["quant/dq_fanout"];
      if (is_output(n.output)) ++raw["quant/float_output"];
      const Node* p = g.Producer(n.inputs[0]);
      const Node* c = single_consumer(n.output);
      if (p && ProducesQuantized(p->op) && c && c->op == Op::QuantizeLinear) {
        ++raw[c->quant.at("y") == n.quant.at("x") ? "quant/requant_equal" : "quant/requant_change"];
      }
      if (p && p->op == Op::Pad) {
        const double v = p->attrs.count("value") ? AttrFloat(*p, "value") : 0.0;
        const double z = double(n.quant.at("x").zero_point[0]);
        if (v == z) {
          ++raw["quant/pad_int_zero_point"];
        } else if (v == 0) {
          ++raw["quant/pad_int_zero_not_zp"];
        } else {
          ++raw["quant/pad_int_other"];
        }
      }
    } else if (n.op == Op::Pad) {
      const Node* p = g.Producer(n.inputs[0]);
      const double v = n.attrs.count("value") ? AttrFloat(n, "value") : 0.0;
      if (p && p->op == Op::DequantizeLinear && !RoleOf(*p, "x")->PerAxis()) {
        const QuantParams& x = p->quant.at("x");
        ++raw[OnGrid(float(v), x.scale[0], x.zero_point[0], x.type) ? "quant/pad_float_on_grid"
                                                                    : "quant/pad_float_off_grid"];
      }
      const Node* c = single_consumer(n.output);
      if (p && ProducesQuantized(p->op) && c && c->op == Op::QLinearConv) {
        const double z = double(c->quant.at("x").zero_point[0]);
        ++raw[v == z   ? "quant/pad_int_zero_point"
              : v == 0 ? "quant/pad_int_zero_not_zp"
                       : "quant/pad_int_other"];
      }
    } else if ((n.op == Op::Conv || n.op == Op::FusedConv) && RoleOf(n, "W")) {
      const QuantParams* w = RoleOf(n, "W");
      ++raw[w->PerAxis() ? "quant/weight_per_channel" : "quant/weight_per_tensor"];
      for (int64_t z : w->zero_point) {
        if (z != 0) {
          ++raw["quant/weight_zero_point"];
          break;
        }
      }
      const Node* c = single_consumer(n.output);
      if (c && c->op == Op::BatchNorm) {
        ++raw["quant/conv_bn_on_grid"];
        for (const Node& o : g.nodes) {
          if (&o != &n && (o.op == Op::Conv || o.op == Op::FusedConv) &&
              o.params.at("W") == n.params.at("W") && RoleOf(o, "W") && *RoleOf(o, "W") == *w) {
            const Node* oc = single_consumer(o.output);
            if (oc && oc->op == Op::BatchNorm) ++raw["quant/shared_weight"];
          }
        }
      }
      const QuantParams* b = RoleOf(n, "B");
      const Node* dq = g.Producer(n.inputs[0]);
      if (b && dq && dq->op == Op::DequantizeLinear && !dq->quant.at("x").PerAxis()) {
        bool exact = true, zp = false;
        for (size_t m = 0; m < b->scale.size(); ++m) {
          const double want =
              static_cast<float>(dq->quant.at("x").scale[0] * w->Scale(static_cast<int64_t>(m)));
          exact &= b->scale[m] == want;
          zp |= b->zero_point[m] != 0;
        }
        if (zp) ++raw["quant/bias_grid_zero_point"];
        if (!exact) ++raw["quant/bias_grid_off_scale"];
        if (exact && !zp) ++raw["quant/bias_grid_exact"];
      }
    } else if ((n.op == Op::Relu || n.op == Op::Relu6 || n.op == Op::Clip) &&
               single_consumer(n.output) && single_consumer(n.output)->op == Op::QuantizeLinear &&
               !single_consumer(n.output)->quant.at("y").PerAxis()) {
      const Node* q = single_consumer(n.output);
      const QuantParams& y = q->quant.at("y");
      const double s = y.scale[0], z = double(y.zero_point[0]);
      const double lo_edge = s * (double(y.qmin()) - z), hi_edge = s * (double(y.qmax()) - z);
      if (n.op == Op::Relu) {
        ++raw[y.zero_point[0] == y.qmin() ? "quant/relu_zp_qmin" : "quant/relu_zp_above_qmin"];
      } else if (n.op == Op::Relu6) {
        if (hi_edge < 6) ++raw["quant/relu6_short_range"];
        if (hi_edge > 6 + 0.5 * s) ++raw["quant/relu6_long_range"];
      } else {
        const double lo = AttrFloat(n, "min"), hi = AttrFloat(n, "max");
        const double in_lo = (lo - lo_edge) / s, in_hi = (hi_edge - hi) / s;
        if (in_lo > 0.5 && in_lo <= 1) ++raw["quant/clip_lo_half_step"];
        if (in_hi > 0.5 && in_hi <= 1) ++raw["quant/clip_hi_half_step"];
        if (in_lo == 0.5 || in_hi == 0.5) ++raw["quant/clip_edge_tie"];
      }
    } else if (n.op == Op::Add && n.inputs.size() == 2 && g.Producer(n.inputs[0]) &&
               g.Producer(n.inputs[1]) && g.Producer(n.inputs[0])->op == Op::DequantizeLinear &&
               g.Producer(n.inputs[1])->op == Op::DequantizeLinear) {
      const Node* c = single_consumer(n.output);
      if (c && c->op == Op::QuantizeLinear) ++raw["quant/add_dq_dq"];
      if (c && c->op == Op::Relu) {
        const Node* q = single_consumer(c->output);
        if (q && q->op == Op::QuantizeLinear) ++raw["quant/residual_add_relu"];
      }
      const std::vector<int> users = g.Consumers(n.output);
      if (users.size() > 1 && std::any_of(users.begin(), users.end(), [&](int u) {
            return g.nodes[size_t(u)].op == Op::Relu;
          })) {
        ++raw["quant/add_fan_out_before_relu"];
      }
    } else if (n.op == Op::MaxPool && g.Producer(n.inputs[0]) &&
               g.Producer(n.inputs[0])->op == Op::DequantizeLinear && single_consumer(n.output) &&
               single_consumer(n.output)->op == Op::QuantizeLinear) {
      ++raw["quant/maxpool_qdq"];
      for (double s : g.Producer(n.inputs[0])->quant.at("x").scale) {
        if (s < 0) {
          ++raw["quant/maxpool_negative_scale"];
          break;
        }
      }
    } else if (n.op == Op::QLinearConv) {
      ++raw["quant/qlinear_conv"];
      for (const auto& st : n.epilogue) {
        if (st.kind == EpilogueKind::kActivation) ++raw["quant/qlinear_conv_act"];
      }
    } else if (n.op == Op::QLinearAdd) {
      ++raw["quant/qlinear_add"];
      if (n.attrs.count("activation") && AttrString(n, "activation") == "relu") {
        ++raw["quant/qlinear_add_relu"];
      }
    }
  }
}

std::map<std::string, int64_t> ClassifyQuantValues(const Graph& g, const TensorMap& inputs) {
  std::map<std::string, int64_t> out;
  bool any = false;
  for (const Node& n : g.nodes) any |= ProducesQuantized(n.op);
  if (!any) return out;
  const RefTensorMap values = RunReference(g, inputs, /*all_values=*/true);
  for (const Node& n : g.nodes) {
    if (!ProducesQuantized(n.op)) continue;
    const QuantParams& y = n.quant.at("y");
    const RefTensor& t = values.at(n.output);
    if (t.value.empty()) continue;
    size_t sat = 0;
    for (double v : t.value) sat += v == double(y.qmin()) || v == double(y.qmax());
    const double share = double(sat) / double(t.value.size());
    if (share >= 0.05 && share <= 0.2) ++out["quant/saturated"];
  }
  return out;
}

}  // namespace fusefuzz
