// Builders shared by the quantized rule and fault tests: QDQ graphs with weights and biases on
// declared grids, as a QDQ model carries them.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/quant.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {

inline Node QNode(std::string name, std::string in, std::string out, QuantParams y) {
  Node n = MakeNode(Op::QuantizeLinear, std::move(name), {std::move(in)}, std::move(out));
  n.quant["y"] = std::move(y);
  return n;
}

inline Node DQNode(std::string name, std::string in, std::string out, QuantParams x) {
  Node n = MakeNode(Op::DequantizeLinear, std::move(name), {std::move(in)}, std::move(out));
  n.quant["x"] = std::move(x);
  return n;
}

inline QuantParams U8(double s, int64_t z) { return PerTensor(QuantType::kUint8, float(s), z); }
inline QuantParams I8(double s, int64_t z) { return PerTensor(QuantType::kInt8, float(s), z); }

// What a QDQ conv chain is made of; the defaults fuse.
struct QConvSpec {
  int64_t c = 2, m = 3, k = 3, pad = 1;
  QuantParams x = U8(0.05, 128), y = U8(0.1, 100);
  std::vector<double> sw = {0.01, 0.02, 0.015};  // per output channel (per tensor if size 1)
  bool bias = true;
  double bias_scale_factor = 1;  // the bias grid's scale = factor * s_x * s_w
  int64_t bias_zero_point = 0;
  int64_t weight_zero_point = 0;
  QuantType weight_type = QuantType::kInt8;
  bool declare_w = true, declare_b = true;
  Op act = Op::Identity;  // Identity: no activation; else Relu, Relu6 or Clip
  double clip_lo = -1, clip_hi = 1;
};

inline QuantParams WeightGrid(const QConvSpec& s) {
  QuantParams w;
  w.type = s.weight_type;
  w.scale.clear();
  for (double v : s.sw) w.scale.push_back(static_cast<float>(v));
  w.zero_point.assign(s.sw.size(), s.weight_zero_point);
  w.axis = s.sw.size() > 1 ? 0 : -1;
  return w;
}

// x -> Q(x) -> DQ -> Conv [-> act] -> Q(y) = "y".
inline Graph QConvGraph(Rng& rng, const QConvSpec& s) {
  QuantParams w = WeightGrid(s);
  Tensor W({s.m, s.c, s.k, s.k});
  const int64_t per = s.c * s.k * s.k;
  for (int64_t i = 0; i < W.size(); ++i) {
    const int64_t ch = w.PerAxis() ? i / per : 0;
    const int64_t q = rng.Int(std::max<int64_t>(w.qmin(), -127), w.qmax());
    W.data[size_t(i)] = DequantizeOnnx(float(q), float(w.Scale(ch)), w.ZeroPoint(ch));
  }
  Node conv = MakeNode(Op::Conv, "conv", {"xd"}, "c",
                       {{"group", int64_t{1}},
                        {"pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad}},
                        {"strides", std::vector<int64_t>{1, 1}}},
                       {{"W", W}});
  if (s.declare_w) conv.quant["W"] = w;
  if (s.bias) {
    QuantParams b;
    b.type = QuantType::kInt32;
    b.scale.clear();
    b.zero_point.clear();
    for (int64_t ch = 0; ch < s.m; ++ch) {
      b.scale.push_back(static_cast<float>(s.bias_scale_factor * s.x.scale[0] * w.Scale(ch)));
      b.zero_point.push_back(s.bias_zero_point);
    }
    b.axis = 0;
    Tensor B({s.m});
    for (int64_t ch = 0; ch < s.m; ++ch) {
      const int64_t q = rng.Int(-2000, 2000);
      B.data[size_t(ch)] = DequantizeOnnx(float(q + s.bias_zero_point), float(b.scale[size_t(ch)]),
                                          s.bias_zero_point);
    }
    conv.params["B"] = B;
    if (s.declare_b) conv.quant["B"] = b;
  }
  std::vector<Node> nodes = {QNode("qx", "x", "xq", s.x), DQNode("dqx", "xq", "xd", s.x), conv};
  std::string last = "c";
  if (s.act != Op::Identity) {
    AttrMap a;
    if (s.act == Op::Clip) a = {{"min", s.clip_lo}, {"max", s.clip_hi}};
    nodes.push_back(MakeNode(s.act, "act", {"c"}, "a", a));
    last = "a";
  }
  nodes.push_back(QNode("qy", last, "y", s.y));
  return MakeGraph({In("x", {1, s.c, 5, 5})}, nodes, {"y"});
}

}  // namespace fusefuzz::testing
