#include "quant_tool/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "generators/seeded_inputs.h"
#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

double F32(double x) { return static_cast<double>(static_cast<float>(x)); }

std::string Where(const Node& n) {
  return "node '" + n.name + "' (" + std::string(OpName(n.op)) + ")";
}

// Comparisons, not a switch: the question is about four ops, not every op.
bool IsQuantizedOp(Op op) {
  return op == Op::QuantizeLinear || op == Op::DequantizeLinear || op == Op::QLinearConv ||
         op == Op::QLinearAdd;
}

bool IsTrailingActivation(Op op) { return op == Op::Relu || op == Op::Relu6 || op == Op::Clip; }

// The values that get a Q -> DQ pair, ONNX Runtime's QDQ placement for Conv and Add: every data
// input of a Conv, every operand of an Add, and the output of each Conv and Add, taken after the
// Relu/Relu6/Clip chain that alone consumes it (kept in the graph, so that ORT's QDQ fusions see
// Conv -> Relu -> Q, which they fold into QLinearConv). Graph outputs stay float.
// kPyTorch adds the Gemm (nn.Linear) like a Conv, and keeps a graph output made by a quantized
// op (PyTorch quantizes it, then the DeQuantStub).
std::vector<std::string> ValuesToQuantize(const Graph& g, bool integer_outputs,
                                          QuantizeFlavor flavor) {
  const bool torch = flavor == QuantizeFlavor::kPyTorch;
  std::vector<std::string> order;
  std::set<std::string> seen;
  auto mark = [&](const std::string& v) {
    if ((g.IsGraphOutput(v) && !torch) || !seen.insert(v).second) return;
    order.push_back(v);
  };
  for (const Node& n : g.nodes) {
    const bool computes = n.op == Op::Conv || n.op == Op::Add || (torch && n.op == Op::Gemm);
    if ((n.op == Op::Conv || n.op == Op::Gemm) && computes && !n.inputs.empty()) {
      mark(n.inputs[0]);
    }
    if (n.op == Op::Add) {
      for (const std::string& v : n.inputs) mark(v);
    }
    if (!computes) continue;
    std::string out = n.output;
    for (;;) {
      std::vector<int> users = g.Consumers(out);
      if (g.IsGraphOutput(out) || users.size() != 1) break;
      const Node& u = g.nodes[static_cast<size_t>(users[0])];
      if (!IsTrailingActivation(u.op)) break;
      out = u.output;
    }
    mark(out);
  }
  if (integer_outputs) {
    for (const std::string& v : g.outputs) {
      if (seen.insert(v).second) order.push_back(v);
    }
  }
  return order;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::vector<float> all;  // kPercentile only
};

double Percentile(std::vector<float>& v, double p) {
  // Nearest rank on the sorted values: index round(p / 100 * (n - 1)).
  const double pos = std::nearbyint(p / 100.0 * static_cast<double>(v.size() - 1));
  const auto k = static_cast<std::ptrdiff_t>(pos);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[static_cast<size_t>(k)];
}

std::string FreshName(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int i = 1; taken.count(name) != 0; ++i) name = base + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

// PyTorch runs these on the quantized tensor with its input's qparams (no observer of their own).
bool SharesInputGrid(Op op) {
  return op == Op::MaxPool || op == Op::AvgPool || op == Op::GlobalAvgPool || op == Op::Flatten ||
         op == Op::Reshape;
}

// The weight integers' range: [-qmax, qmax] (ONNX Runtime), [-128, 127] (PyTorch's qint8).
std::pair<double, double> WeightRange(bool reduce_range, QuantizeFlavor flavor) {
  if (flavor == QuantizeFlavor::kPyTorch) return {-128, 127};
  const double qmax = WeightQmax(reduce_range);
  return {-qmax, qmax};
}

// The params of `w` snapped onto `q` (channel along `axis` of a 2-d or 4-d tensor).
void SnapWeights(Tensor& w, const QuantParams& q, int64_t axis, std::pair<double, double> range) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
  const int64_t channels = w.shape[static_cast<size_t>(axis)];
  for (size_t i = 0; i < w.data.size(); ++i) {
    const double s = q.scale[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)];
    const double v =
        std::clamp(std::nearbyint(static_cast<double>(w.data[i]) / s), range.first, range.second);
    w.data[i] = static_cast<float>(s * v);
  }
}

// kPyTorch: nn.Linear's weight per output channel (axis 0 of B when transB, else axis 1); its
// bias stays float, as PyTorch's quantized Linear keeps it (the kernel rounds it itself).
void QuantizeGemmParams(Node& n, bool reduce_range, QuantizeFlavor flavor, QuantizeSummary& sum) {
  auto b_it = n.params.find("B");
  if (b_it == n.params.end() || b_it->second.shape.size() != 2) {
    sum.notes.push_back(Where(n) + ": weights are not a constant 2-d param, kept float");
    return;
  }
  const int64_t axis = AttrInt(n, "transB") != 0 ? 0 : 1;
  const QuantParams q = WeightParams(b_it->second, reduce_range, flavor, axis);
  SnapWeights(b_it->second, q, axis, WeightRange(reduce_range, flavor));
  n.quant["B"] = q;
  ++sum.gemms;
}

// Gives the Conv int8 per-channel weights and, when its integers fit, an int32 bias at
// s_x * s_w[m] (both float32, as the tool's numpy float32 product).
void QuantizeConvParams(Node& n, double s_x, bool reduce_range, QuantizeFlavor flavor,
                        QuantizeSummary& sum) {
  auto w_it = n.params.find("W");
  if (w_it == n.params.end() || w_it->second.shape.size() != 4) {
    sum.notes.push_back(Where(n) + ": weights are not a constant 4-d param, kept float");
    return;
  }
  Tensor& w = w_it->second;
  const QuantParams qw = WeightParams(w, reduce_range, flavor);
  const int64_t m_count = w.shape[0];
  SnapWeights(w, qw, 0, WeightRange(reduce_range, flavor));
  n.quant["W"] = qw;
  ++sum.convs;
  auto b_it = n.params.find("B");
  if (b_it == n.params.end()) return;
  Tensor& b = b_it->second;
  QuantParams qb;
  qb.type = QuantType::kInt32;
  qb.axis = 0;
  qb.scale.resize(static_cast<size_t>(m_count));
  qb.zero_point.assign(static_cast<size_t>(m_count), 0);
  std::vector<float> data(b.data.size());
  for (size_t m = 0; m < b.data.size(); ++m) {
    const double s = F32(F32(s_x) * qw.scale[m]);
    const double q = std::nearbyint(static_cast<double>(b.data[m]) / s);
    if (!(std::fabs(q) <= static_cast<double>(kMaxExactInt))) {
      sum.notes.push_back(Where(n) + ": bias channel " + std::to_string(m) +
                          " needs an int32 beyond 2^24 at s_x * s_w, bias kept float");
      ++sum.float_biases;
      return;
    }
    qb.scale[m] = s;
    data[m] = static_cast<float>(s * q);
  }
  b.data = std::move(data);
  n.quant["B"] = qb;
}

}  // namespace

QuantParams ActivationParams(double lo, double hi) {
  const float rmin = std::min(static_cast<float>(lo), 0.0f);
  const float rmax = std::max(static_cast<float>(hi), 0.0f);
  const float scale = (rmax - rmin) / 255.0f;
  if (!(scale >= std::numeric_limits<float>::min()) || !std::isfinite(scale)) {
    return PerTensor(QuantType::kUint8, 1.0, 0);
  }
  const double zp = std::clamp(std::nearbyint(-static_cast<double>(rmin / scale)), 0.0, 255.0);
  return PerTensor(QuantType::kUint8, scale, static_cast<int64_t>(zp));
}

int WeightQmax(bool reduce_range) { return reduce_range ? 64 : 127; }

QuantParams WeightParams(const Tensor& w, bool reduce_range, QuantizeFlavor flavor, int64_t axis) {
  QuantParams q;
  q.type = QuantType::kInt8;
  q.axis = static_cast<int>(axis);
  q.scale.clear();  // QuantParams starts as per tensor {1}, {0}
  q.zero_point.clear();
  const int64_t m_count = w.shape.empty() ? 1 : w.shape[static_cast<size_t>(axis)];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
  std::vector<double> amax(static_cast<size_t>(std::max<int64_t>(m_count, 0)), 0.0);
  for (size_t i = 0; i < w.data.size() && m_count > 0; ++i) {
    double& a = amax[static_cast<size_t>((static_cast<int64_t>(i) / inner) % m_count)];
    a = std::max(a, std::fabs(static_cast<double>(w.data[i])));
  }
  // PyTorch: max / ((quant_max - quant_min) / 2) = max / 127.5; ONNX Runtime: max / qmax.
  const float divisor =
      flavor == QuantizeFlavor::kPyTorch ? 127.5f : static_cast<float>(WeightQmax(reduce_range));
  for (double a : amax) {
    const float s = static_cast<float>(a) / divisor;
    q.scale.push_back(s >= std::numeric_limits<float>::min() ? s : 1.0);
    q.zero_point.push_back(0);
  }
  return q;
}

Graph QuantizeStatic(const Graph& g, const QuantizeOptions& o, QuantizeSummary* summary) {
  if (o.calibration_inputs < 1 || o.calibration_inputs > 10000) {
    throw InputError("--calibration-inputs",
                     "must be in [1, 10000], not " + std::to_string(o.calibration_inputs));
  }
  if (o.method == CalibrationMethod::kPercentile && !(o.percentile > 50 && o.percentile <= 100)) {
    throw InputError("--percentile", "must be in (50, 100], not " + std::to_string(o.percentile));
  }
  for (const Node& n : g.nodes) {
    if (IsQuantizedOp(n.op) || !n.quant.empty()) {
      throw InputError(Where(n),
                       "the model is already quantized (fusefuzz quantize takes a float "
                       "model)");
    }
  }
  const bool torch = o.flavor == QuantizeFlavor::kPyTorch;
  if (torch && o.reduce_range) {
    throw InputError("--reduce-range",
                     "is ONNX Runtime's weight rule; --flavor pytorch quantizes weights as "
                     "PyTorch's per_channel_symmetric qint8 does");
  }
  const std::vector<std::string> values = ValuesToQuantize(g, o.integer_outputs, o.flavor);
  if (values.empty()) {
    throw InputError("", "nothing to quantize: the model has no Conv or Add");
  }

  // Calibration: the reference's values of every tensor to quantize, over N seeded inputs.
  std::map<std::string, Range> ranges;
  const int samples = o.calibration_data.empty() ? o.calibration_inputs
                                                 : static_cast<int>(o.calibration_data.size());
  for (int i = 0; i < samples; ++i) {
    const TensorMap in = o.calibration_data.empty()
                             ? InputsFromSeed(g, o.seed + static_cast<uint64_t>(i))
                             : o.calibration_data[static_cast<size_t>(i)];
    const RefTensorMap all = RunReference(g, in, /*all_values=*/true);
    for (const std::string& v : values) {
      Range& r = ranges[v];
      auto add = [&](double x) {
        r.lo = std::min(r.lo, x);
        r.hi = std::max(r.hi, x);
        if (o.method == CalibrationMethod::kPercentile) r.all.push_back(static_cast<float>(x));
      };
      if (auto it = all.find(v); it != all.end()) {
        for (double x : it->second.value) add(x);
      } else if (auto t = in.find(v); t != in.end()) {
        for (float x : t->second.data) add(x);
      } else {
        throw InputError("value '" + v + "'", "no calibration value (internal error)");
      }
    }
  }
  std::map<std::string, QuantParams> params;
  for (const std::string& v : values) {
    Range& r = ranges[v];
    if (o.method == CalibrationMethod::kPercentile && !r.all.empty()) {
      r.hi = Percentile(r.all, o.percentile);
      r.lo = Percentile(r.all, 100.0 - o.percentile);
    }
    params[v] = ActivationParams(r.lo, r.hi);
  }
  // kPyTorch: a pool, Flatten or Reshape of a quantized value is quantized on that value's grid
  // (in node order, so pool -> Flatten chains share one grid).
  std::set<std::string> shared;
  for (const Node& n : g.nodes) {
    if (!torch || !SharesInputGrid(n.op) || n.inputs.empty()) continue;
    auto in = params.find(n.inputs[0]);
    if (in == params.end()) continue;
    params[n.output] = in->second;
    shared.insert(n.output);
  }

  QuantizeSummary sum;
  std::set<std::string> taken;
  for (const ValueInfo& v : g.inputs) taken.insert(v.name);
  for (const Node& n : g.nodes) {
    taken.insert(n.name);
    taken.insert(n.output);
  }
  std::map<std::string, std::string> dq_of;  // value -> its dequantized copy
  std::map<std::string, std::string> q_of;   // value -> its integers
  Graph out = g;
  out.nodes.clear();
  auto emit_pair = [&](const std::string& v) {
    const QuantParams& p = params.at(v);
    Node q;
    q.op = Op::QuantizeLinear;
    q.name = FreshName(v + "_QuantizeLinear", taken);
    q.inputs = {v};
    q.output = FreshName(v + "_QuantizeLinear_Output", taken);
    q.quant["y"] = p;
    // kPyTorch: a value only reshaped further (pool -> Flatten) is read as integers: no DQ here.
    // Else (integer_outputs aside) Q -> DQ.
    const std::vector<int> users = g.Consumers(v);
    const bool only_reshaped = torch && !users.empty() && !g.IsGraphOutput(v) &&
                               std::all_of(users.begin(), users.end(), [&](int u) {
                                 const Op op = g.nodes[static_cast<size_t>(u)].op;
                                 return op == Op::Flatten || op == Op::Reshape;
                               });
    if ((g.IsGraphOutput(v) && o.integer_outputs) || only_reshaped) {
      // integer_outputs: the integers are the output.
      if (g.IsGraphOutput(v)) std::replace(out.outputs.begin(), out.outputs.end(), v, q.output);
      q_of[v] = q.output;
      out.nodes.push_back(std::move(q));
      ++sum.activations;
      return;
    }
    Node dq;
    dq.op = Op::DequantizeLinear;
    dq.name = FreshName(v + "_DequantizeLinear", taken);
    dq.inputs = {q.output};
    dq.output = FreshName(v + "_DequantizeLinear_Output", taken);
    dq.quant["x"] = p;
    dq_of[v] = dq.output;
    q_of[v] = q.output;
    // kPyTorch: a quantized graph output is answered dequantized (the DeQuantStub).
    if (g.IsGraphOutput(v)) std::replace(out.outputs.begin(), out.outputs.end(), v, dq.output);
    out.nodes.push_back(std::move(q));
    out.nodes.push_back(std::move(dq));
    ++sum.activations;
  };
  for (const ValueInfo& v : g.inputs) {
    if (params.count(v.name) != 0) emit_pair(v.name);
  }
  for (const Node& n : g.nodes) {
    Node copy = n;
    // kPyTorch: Flatten and Reshape of a quantized value move its integers (PyTorch reshapes the
    // quantized tensor), then one DequantizeLinear: Q -> Flatten -> DQ, not a second Q -> DQ pair
    // of the same value.
    if (torch && (n.op == Op::Flatten || n.op == Op::Reshape) && !n.inputs.empty() &&
        q_of.count(n.inputs[0]) != 0) {
      copy.inputs[0] = q_of.at(n.inputs[0]);
      const QuantParams& p = params.at(n.inputs[0]);
      copy.output = FreshName(n.output + "_integers", taken);
      Node dq;
      dq.op = Op::DequantizeLinear;
      dq.name = FreshName(n.output + "_DequantizeLinear", taken);
      dq.inputs = {copy.output};
      dq.output = FreshName(n.output + "_DequantizeLinear_Output", taken);
      dq.quant["x"] = p;
      dq_of[n.output] = dq.output;
      q_of[n.output] = copy.output;
      if (g.IsGraphOutput(n.output)) {
        std::replace(out.outputs.begin(), out.outputs.end(), n.output, dq.output);
      }
      out.nodes.push_back(std::move(copy));
      out.nodes.push_back(std::move(dq));
      continue;
    }
    for (std::string& in : copy.inputs) {
      if (auto it = dq_of.find(in); it != dq_of.end()) in = it->second;
    }
    if (copy.op == Op::Conv) {
      if (auto p = params.find(n.inputs[0]); p != params.end()) {
        QuantizeConvParams(copy, p->second.scale[0], o.reduce_range, o.flavor, sum);
      } else {
        sum.notes.push_back(Where(n) + ": its input is a graph output, kept float");
      }
    }
    if (copy.op == Op::Gemm && torch && params.count(n.inputs[0]) != 0) {
      QuantizeGemmParams(copy, o.reduce_range, o.flavor, sum);
    }
    out.nodes.push_back(std::move(copy));
    if (params.count(n.output) != 0 &&
        (shared.count(n.output) != 0 ||
         std::find(values.begin(), values.end(), n.output) != values.end())) {
      emit_pair(n.output);
    }
  }
  VerifyGraph(out);
  if (summary != nullptr) *summary = std::move(sum);
  return out;
}

}  // namespace fusefuzz
