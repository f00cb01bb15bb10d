// The hand-built quantized graphs of oracles/grid_test_util.h (no tests of its own).
#include <algorithm>

#include "oracles/grid_test_util.h"

namespace fusefuzz::gridtest {
namespace {

Node MakeNode(const std::string& name, Op op, std::vector<std::string> in, std::string out) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.output = std::move(out);
  return n;
}

AttrMap ConvAttrMap(const QConvCase& q) {
  return {{"pads", std::vector<int64_t>{q.pad, q.pad, q.pad, q.pad}},
          {"strides", std::vector<int64_t>{q.stride, q.stride}},
          {"group", q.group}};
}

QuantParams WeightParams(const QConvCase& q) {
  QuantParams p;
  p.type = QuantType::kInt8;
  p.scale = q.w_scale;
  p.zero_point.assign(q.w_scale.size(), 0);
  p.axis = 0;
  return p;
}

Shape WShape(const QConvCase& q) { return {q.m, q.c / q.group, q.k, q.k}; }

Shape OutShape(const QConvCase& q) {
  const int64_t oh = (q.h + 2 * q.pad - q.k) / q.stride + 1;
  const int64_t ow = (q.w + 2 * q.pad - q.k) / q.stride + 1;
  return {1, q.m, oh, ow};
}

std::vector<EpilogueStep> ActSteps(const QConvCase& q) {
  std::vector<EpilogueStep> steps;
  if (q.act == Op::Identity) return steps;
  EpilogueStep s;
  s.kind = EpilogueKind::kActivation;
  s.act = q.act;
  if (q.act == Op::Clip) s.attrs = {{"min", q.clip_lo}, {"max", q.clip_hi}};
  steps.push_back(s);
  return steps;
}

}  // namespace

Graph QdqGraph(const QConvCase& q) {
  Graph g;
  g.inputs.push_back({"x", {1, q.c, q.h, q.w}});
  Node qx = MakeNode("qx", Op::QuantizeLinear, {"x"}, "xq");
  qx.quant["y"] = q.x;
  Node dqx = MakeNode("dqx", Op::DequantizeLinear, {"xq"}, "xf");
  dqx.quant["x"] = q.x;
  Node conv = MakeNode("conv", Op::Conv, {"xf"}, "c");
  conv.attrs = ConvAttrMap(q);
  const QuantParams wq = WeightParams(q);
  Tensor w(WShape(q));
  const int64_t per_m = NumElements(w.shape) / q.m;
  for (size_t i = 0; i < w.data.size(); ++i) {
    w.data[i] = DequantizeOnnx(q.w_int[i], static_cast<float>(q.w_scale[i / size_t(per_m)]), 0);
  }
  conv.params["W"] = w;
  conv.quant["W"] = wq;
  if (!q.b_float.empty()) {
    conv.params["B"] = Tensor({q.m}, q.b_float);
  } else if (!q.b_int.empty()) {
    Tensor b({q.m});
    QuantParams bq;
    bq.type = QuantType::kInt32;
    bq.axis = 0;
    bq.scale.clear();
    for (int64_t m = 0; m < q.m; ++m) {
      const double sb = static_cast<float>(q.x.scale[0] * q.w_scale[size_t(m)]);
      bq.scale.push_back(sb);
      b.data[size_t(m)] = static_cast<float>(sb * q.b_int[size_t(m)]);
    }
    bq.zero_point.assign(size_t(q.m), 0);
    conv.params["B"] = b;
    conv.quant["B"] = bq;
  }
  g.nodes = {qx, dqx, conv};
  std::string v = "c";
  if (q.residual) {
    g.inputs.push_back({"r", OutShape(q)});
    Node dqr = MakeNode("dqr", Op::DequantizeLinear, {"r"}, "rf");
    dqr.quant["x"] = q.r;
    Node add = MakeNode("add", Op::Add, {"c", "rf"}, "s");
    g.nodes.push_back(dqr);
    g.nodes.push_back(add);
    v = "s";
  }
  if (q.act != Op::Identity) {
    Node a = MakeNode("act", q.act, {v}, "a");
    if (q.act == Op::Clip) a.attrs = {{"min", q.clip_lo}, {"max", q.clip_hi}};
    g.nodes.push_back(a);
    v = "a";
  }
  Node qy = MakeNode("qy", Op::QuantizeLinear, {v}, "yq");
  qy.quant["y"] = q.y;
  g.nodes.push_back(qy);
  g.outputs = {"yq"};
  return g;
}

Graph IntegerGraph(const QConvCase& q) {
  Graph g;
  g.inputs.push_back({"x", {1, q.c, q.h, q.w}});
  Node qx = MakeNode("qx", Op::QuantizeLinear, {"x"}, "xq");
  qx.quant["y"] = q.x;
  Node qc = MakeNode("qconv", Op::QLinearConv, {"xq"}, "yq");
  qc.attrs = ConvAttrMap(q);
  qc.params["W"] = Tensor(WShape(q), q.w_int);
  std::vector<float> b = q.b_int;
  if (!q.b_float.empty()) {  // the integer form rounds a float bias to the int32 grid
    b.clear();
    for (int64_t m = 0; m < q.m; ++m) {
      b.push_back(std::nearbyint(q.b_float[size_t(m)] / (q.x.scale[0] * q.w_scale[size_t(m)])));
    }
  }
  if (!b.empty()) qc.params["B"] = Tensor({q.m}, b);
  qc.quant["x"] = q.x;
  qc.quant["w"] = WeightParams(q);
  qc.quant["y"] = q.y;
  if (q.residual) {
    g.inputs.push_back({"r", OutShape(q)});
    qc.inputs.push_back("r");
    qc.quant["r"] = q.r;
    EpilogueStep add;
    add.kind = EpilogueKind::kAdd;
    add.input = 1;
    qc.epilogue.push_back(add);
  }
  for (const auto& s : ActSteps(q)) qc.epilogue.push_back(s);
  g.nodes = {qx, qc};
  g.outputs = {"yq"};
  return g;
}

namespace {

float Scale(Rng& rng) {
  // Powers of two (ties), a hair off them, or anything.
  const double p = std::ldexp(1.0, static_cast<int>(rng.Int(-8, -2)));
  const int kind = static_cast<int>(rng.Int(0, 2));
  if (kind == 0) return static_cast<float>(p);
  if (kind == 1) return std::nextafter(static_cast<float>(p), rng.Bool(0.5) ? 1.0f : 0.0f);
  return static_cast<float>(p * rng.Uniform(1, 2));
}

QuantParams Act8(Rng& rng) {
  const QuantType t = rng.Bool(0.5) ? QuantType::kUint8 : QuantType::kInt8;
  const int64_t lo = QMin(t), hi = QMax(t);
  const int64_t zs[] = {lo, lo + 1, (lo + hi) / 2, hi - 1, hi, rng.Int(lo, hi)};
  return PerTensor(t, Scale(rng), zs[rng.Int(0, 5)]);
}

}  // namespace

QConvCase RandomCase(Rng& rng) {
  QConvCase q;
  q.c = rng.Int(1, 4);
  q.m = rng.Int(1, 4);
  if (rng.Bool(0.2)) q.group = q.c, q.m = q.c * rng.Int(1, 2);  // depthwise
  q.k = rng.Int(1, 3);
  q.h = rng.Int(q.k, 7);
  q.w = rng.Int(q.k, 7);
  q.pad = rng.Int(0, q.k / 2 + (q.k > 1 ? 1 : 0));
  q.stride = rng.Int(1, 2);
  q.x = Act8(rng);
  q.y = Act8(rng);
  q.w_scale.clear();
  for (int64_t m = 0; m < q.m; ++m) q.w_scale.push_back(Scale(rng));
  const int64_t taps = q.c / q.group * q.k * q.k;
  q.w_int.clear();
  for (int64_t i = 0; i < q.m * taps; ++i)
    q.w_int.push_back(static_cast<float>(rng.Int(-128, 127)));
  // The output scale: the conv's typical range over the output's 256 steps, so that some 5-20%
  // saturate.
  double typical = 0;
  for (int64_t m = 0; m < q.m; ++m)
    typical = std::max(typical, q.x.scale[0] * q.w_scale[size_t(m)]);
  typical *= 74 * 74 * std::sqrt(static_cast<double>(taps));  // rms of x and w steps: ~74
  q.y.scale = {static_cast<float>(typical / 80 * rng.Uniform(0.5, 2))};
  const int bias = static_cast<int>(rng.Int(0, 2));
  for (int64_t m = 0; m < q.m; ++m) {
    const double sb = q.x.scale[0] * q.w_scale[size_t(m)];
    const double b = rng.Uniform(-40, 40) * q.y.scale[0];
    if (bias == 1) q.b_int.push_back(static_cast<float>(std::nearbyint(b / sb)));
    if (bias == 2) q.b_float.push_back(static_cast<float>(b));
  }
  if (rng.Bool(0.3)) {
    q.residual = true;
    q.r = Act8(rng);
    q.r.scale = {static_cast<float>(q.y.scale[0] * rng.Uniform(0.3, 3))};
  }
  const Op acts[] = {Op::Identity, Op::Relu, Op::Relu6, Op::Clip};
  q.act = acts[rng.Int(0, 3)];
  if (q.act == Op::Clip) {
    // Bounds within half a step of the range's edges, or anywhere.
    const double sy = q.y.scale[0];
    const double lo_real = (static_cast<double>(q.y.qmin() - q.y.zero_point[0])) * sy;
    q.clip_lo = static_cast<float>(rng.Bool(0.5) ? lo_real + rng.Uniform(-0.5, 0.5) * sy
                                                 : rng.Uniform(-20, 0) * sy);
    q.clip_hi = static_cast<float>(q.clip_lo + rng.Uniform(0, 200) * sy);
  }
  return q;
}

TensorMap RandomInputs(const QConvCase& q, Rng& rng) {
  TensorMap in;
  Tensor x({1, q.c, q.h, q.w});
  const double s = q.x.scale[0];
  const double z = static_cast<double>(q.x.zero_point[0]);
  for (float& v : x.data) {
    // Grid steps over the type's range and a little beyond it; a third exactly on ties.
    double steps = rng.Uniform(static_cast<double>(q.x.qmin()) - z - 8,
                               static_cast<double>(q.x.qmax()) - z + 8);
    if (rng.Bool(0.33)) steps = std::floor(steps) + 0.5;
    v = static_cast<float>(steps * s);
  }
  in["x"] = x;
  if (q.residual) {
    const Shape os = {1, q.m, (q.h + 2 * q.pad - q.k) / q.stride + 1,
                      (q.w + 2 * q.pad - q.k) / q.stride + 1};
    Tensor r(os);
    for (float& v : r.data) v = static_cast<float>(rng.Int(q.r.qmin(), q.r.qmax()));
    in["r"] = r;
  }
  return in;
}

}  // namespace fusefuzz::gridtest
