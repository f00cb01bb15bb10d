// The int8 patterns as QDQ graphs (bench/quant_patterns.h).
#include "bench/quant_patterns.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/quant.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

// The layer's input and the residual have their real 0 at qmin, as after a ReLU (the kernel
// rows' activations too): real values 0 .. 5.1.
constexpr double kInputScale = static_cast<double>(0.02f);  // a float32 value, as ONNX stores it

Node MakeNode(const std::string& name, Op op, std::vector<std::string> inputs) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.output = name;
  return n;
}

Node Dequantize(const std::string& name, const std::string& in, const QuantParams& q) {
  Node n = MakeNode(name, Op::DequantizeLinear, {in});
  n.quant["x"] = q;
  return n;
}

Node Quantize(const std::string& name, const std::string& in, const QuantParams& q) {
  Node n = MakeNode(name, Op::QuantizeLinear, {in});
  n.quant["y"] = q;
  return n;
}

// Deterministic integers of `type` (an LCG: the bench needs no statistical quality).
Tensor Bytes(Shape shape, uint32_t seed, QuantType type) {
  Tensor t(std::move(shape));
  const int64_t qmin = QMin(type);
  seed = seed * 2654435761u + 12345u;
  for (float& v : t.data) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(int64_t{seed >> 24} + qmin);
  }
  return t;
}

// BatchNorm statistics folded into W and B before the weights are quantized, as a
// post-training flow folds BN first: W[m] *= g / sqrt(v + eps), B = (B - mean) g / sqrt(v + eps)
// + beta (in double, then float32).
void FoldBatchNorm(Node& conv) {
  Tensor& w = conv.params.at("W");
  Tensor& b = conv.params.at("B");
  const int64_t m = w.shape[0], per = w.size() / m;
  const Tensor gamma = Filled({m}, 20, 0.5f), beta = Filled({m}, 21, 0.1f),
               mean = Filled({m}, 22, 0.1f), var = Filled({m}, 23, 0.25f);
  for (int64_t c = 0; c < m; ++c) {
    const size_t i = static_cast<size_t>(c);
    const double s = (1.0 + gamma.data[i]) / std::sqrt(0.5 + var.data[i] + 1e-5);
    for (int64_t j = c * per; j < (c + 1) * per; ++j) {
      w.data[static_cast<size_t>(j)] = static_cast<float>(w.data[static_cast<size_t>(j)] * s);
    }
    b.data[i] = static_cast<float>((b.data[i] - mean.data[i]) * s + beta.data[i]);
  }
}

// W onto int8 per output channel (symmetric: scale max|W[m]| / 127, integers in [-127, 127],
// zero point 0) and B onto int32 at float32(s_x * s_w[m]): ONNX Runtime's quantize_static with
// per_channel, and exactly the grids the QDQ conv fusions require (qdq-conv-fuse's BiasGrid).
void SnapToGrids(Node& conv, double s_x) {
  Tensor& w = conv.params.at("W");
  const int64_t m = w.shape[0], per = w.size() / m;
  QuantParams wq;
  wq.type = QuantType::kInt8;
  wq.axis = 0;
  wq.scale.clear();
  wq.zero_point.clear();
  for (int64_t c = 0; c < m; ++c) {
    double amax = 0;
    for (int64_t j = c * per; j < (c + 1) * per; ++j) {
      amax = std::max(amax, std::fabs(double(w.data[static_cast<size_t>(j)])));
    }
    const double s = amax > 0 ? double(static_cast<float>(amax / 127)) : 1.0;
    for (int64_t j = c * per; j < (c + 1) * per; ++j) {
      float& v = w.data[static_cast<size_t>(j)];
      const double q = std::clamp(std::nearbyint(double(v) / s), -127.0, 127.0);
      v = DequantizeOnnx(static_cast<float>(q), static_cast<float>(s), 0);
    }
    wq.scale.push_back(s);
    wq.zero_point.push_back(0);
  }
  conv.quant["W"] = wq;
  Tensor& b = conv.params.at("B");
  QuantParams bq;
  bq.type = QuantType::kInt32;
  bq.axis = 0;
  bq.scale.clear();
  bq.zero_point.clear();
  const double lim = static_cast<double>(kMaxExactInt - 1);
  for (int64_t c = 0; c < m; ++c) {
    const double s = static_cast<float>(s_x * wq.scale[static_cast<size_t>(c)]);
    float& v = b.data[static_cast<size_t>(c)];
    const double q = std::clamp(std::nearbyint(double(v) / s), -lim, lim);
    v = DequantizeOnnx(static_cast<float>(q), static_cast<float>(s), 0);
    bq.scale.push_back(s);
    bq.zero_point.push_back(0);
  }
  conv.quant["B"] = bq;
}

// Parameters of `type` for `value` as a static min/max calibration chooses them on the case's
// own inputs (ONNX Runtime's compute_scale_zp, as `fusefuzz quantize` does): the range widened
// to hold 0, scale float32((hi - lo) / 255), zero point qmin + round(-lo / scale). After a Relu
// or Relu6 lo is 0, so the zero point is qmin, which the engines' QDQ fusions need to drop the
// activation.
QuantParams Calibrate(const Graph& g, const TensorMap& inputs, const std::string& value,
                      QuantType type) {
  Graph prefix = g;
  prefix.outputs = {value};
  const RefTensorMap r = RunReference(prefix, inputs);
  double lo = 0, hi = 0;
  for (double v : r.at(value).value) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double qmin = double(QMin(type)), qmax = double(QMax(type));
  const double s = static_cast<float>((hi - lo) / (qmax - qmin));
  if (!(s >= FLT_MIN)) return PerTensor(type, 1.0, QMin(type));
  const double z = std::clamp(qmin + std::nearbyint(-lo / s), qmin, qmax);
  return PerTensor(type, s, static_cast<int64_t>(z));
}

}  // namespace

std::string QuantCaseName(const Int8BenchCase& c, QuantType activations) {
  return std::string("BM_FusionInt8/") + QPatternName(c.pattern) + "/" + c.layer.model + "/" +
         QShapeName(c.layer) + (activations == QuantType::kInt8 ? "_I8" : "");
}

BuiltCase BuildQuantCase(const Int8BenchCase& c, QuantType activations) {
  if (activations == QuantType::kInt32) {
    throw std::logic_error("BuildQuantCase: activations are uint8 or int8");
  }
  const QLayer& l = c.layer;
  BuiltCase bc;
  Graph& g = bc.graph;
  const QuantParams qx = PerTensor(activations, kInputScale, QMin(activations));
  const Shape in_shape = {1, l.c, l.h, l.h}, out_shape = {1, l.m, l.h, l.h};
  g.inputs.push_back({"x", in_shape});
  bc.inputs["x"] = Bytes(in_shape, 100, activations);
  g.nodes.push_back(Dequantize("dq_x", "x", qx));

  Node conv = MakeNode("conv", Op::Conv, {"dq_x"});
  const int64_t pad = l.k / 2, cg = l.c / l.group;
  conv.attrs["strides"] = std::vector<int64_t>{1, 1};
  conv.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  conv.attrs["group"] = l.group;
  // Weights ~ 1/sqrt(fan_in), as the float patterns' (bench/fusion_patterns.cc): outputs O(1).
  conv.params["W"] = Filled({l.m, cg, l.k, l.k}, 1, 1.0f / std::sqrt(float(cg * l.k * l.k)));
  conv.params["B"] = Filled({l.m}, 2, 0.1f);
  if (c.pattern == QPattern::kConvBnReluRequant) FoldBatchNorm(conv);
  SnapToGrids(conv, kInputScale);
  g.nodes.push_back(std::move(conv));

  std::string last = "conv";
  switch (c.pattern) {
    case QPattern::kConvRequant:
      break;
    case QPattern::kConvBnReluRequant:
      g.nodes.push_back(MakeNode("relu", Op::Relu, {"conv"}));
      last = "relu";
      break;
    case QPattern::kDwRelu6Requant:
      g.nodes.push_back(MakeNode("relu6", Op::Relu6, {"conv"}));
      last = "relu6";
      break;
    case QPattern::kConvAddReluRequant: {
      const QuantParams qc = Calibrate(g, bc.inputs, "conv", activations);
      g.nodes.push_back(Quantize("q_conv", "conv", qc));
      g.nodes.push_back(Dequantize("dq_conv", "q_conv", qc));
      g.inputs.push_back({"r", out_shape});
      bc.inputs["r"] = Bytes(out_shape, 101, activations);
      g.nodes.push_back(Dequantize("dq_r", "r", qx));
      g.nodes.push_back(MakeNode("add", Op::Add, {"dq_conv", "dq_r"}));
      g.nodes.push_back(MakeNode("relu", Op::Relu, {"add"}));
      last = "relu";
      break;
    }
  }
  const QuantParams qy = Calibrate(g, bc.inputs, last, activations);
  g.nodes.push_back(Quantize("q_y", last, qy));
  g.outputs = {"q_y"};
  VerifyGraph(g);
  return bc;
}

}  // namespace fusefuzz
