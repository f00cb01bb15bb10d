// Calibration and grids of the quantized generator: parameters a post-training quantization
// flow would choose (min/max of the reference's values, weights per channel on int8, biases on
// int32 at s_x * s_w), then biased toward the preconditions of the real int8 bugs.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "generators/gen_quant.h"
#include "kernels/reference/reference.h"

namespace fusefuzz::gen {
namespace {

// A float32 scale in a range where x / s and s * q stay normal for the generator's values.
double Float32Scale(double s) {
  if (!(s > 0) || !std::isfinite(s)) s = 1.0 / 128;
  s = std::clamp(s, std::ldexp(1.0, -30), std::ldexp(1.0, 20));
  return static_cast<float>(s);
}

double PowerOfTwo(double s, bool up) {
  const double e = up ? std::ceil(std::log2(s)) : std::nearbyint(std::log2(s));
  return std::ldexp(1.0, static_cast<int>(e));
}

double Quantile(const std::vector<double>& sorted, double f) {
  const size_t i = static_cast<size_t>(f * static_cast<double>(sorted.size() - 1));
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

std::vector<double> ReferenceValues(Builder& b, const std::string& value) {
  Graph g = b.graph();
  g.outputs = {value};
  RefTensorMap r = RunReference(g, b.inputs());
  return r.at(value).value;
}

QuantParams CalibrateQuant(Builder& b, const std::vector<double>& raw, const QuantChoice& c) {
  const GenQuant& p = b.cfg().quant;
  ChoiceSource& src = b.src();
  const double qmin = static_cast<double>(QMin(c.type)), qmax = static_cast<double>(QMax(c.type));
  std::vector<double> v;
  v.reserve(raw.size());
  // What a calibrating observer after the activation sees (Relu: z = qmin); else the range of
  // the activation's input, as when the observer sits before a later-fused activation.
  const bool after = (c.act == Op::Relu || c.act == Op::Relu6) && src.Bool(p.calibrate_after_act);
  for (double x : raw) {
    if (!std::isfinite(x)) continue;
    if (after) x = c.act == Op::Relu ? std::max(x, 0.0) : std::clamp(x, 0.0, 6.0);
    v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  double lo = 0, hi = 0;
  if (!v.empty()) {
    lo = std::min(0.0, v.front());
    hi = std::max(0.0, v.back());
    if (src.Bool(p.saturate) && v.size() >= 10) {
      // 5-20% of the elements beyond the range: split between the tails that exist.
      const double f = src.Uniform(0.05, 0.2);
      const bool neg = v.front()<0, pos = v.back()> 0;
      const double f_lo = neg && pos ? f / 2 : neg ? f : 0;
      const double f_hi = neg && pos ? f / 2 : pos ? f : 0;
      if (f_lo > 0) lo = std::min(0.0, Quantile(v, f_lo));
      if (f_hi > 0) hi = std::max(0.0, Quantile(v, 1 - f_hi));
    }
  }
  double s = (hi - lo) / (qmax - qmin);
  if (!(s > 0)) s = 1.0 / 128;
  double z = std::clamp(std::nearbyint(qmin - lo / s), qmin, qmax);
  if (src.Bool(p.edge_zero_point)) {
    const double mid = std::floor((qmin + qmax + 1) / 2);  // uint8 128, int8 0
    const double edges[] = {qmin, qmin + 1, mid, qmax - 1, qmax};
    z = edges[src.Int(0, 4)];
    // The side with room keeps its range; the other side saturates (or is empty).
    const double s_hi = z < qmax ? hi / (qmax - z) : 0, s_lo = z > qmin ? -lo / (z - qmin) : 0;
    s = std::max(s_hi, s_lo);
    if (!(s > 0)) s = 1.0 / 128;
  }
  if (c.act == Op::Relu6 && z < qmax) {
    // The range stops short of Relu6's kink (the upper clamp is then exact after Q), or reaches
    // beyond it by more than half a step (then it is not: TensorFlow #53859).
    const double reach =
        src.Bool(p.relu6_short_range) ? src.Uniform(0.5, 0.97) : src.Uniform(1.05, 2.0);
    s = 6 * reach / (qmax - z);
  }
  if (src.Bool(p.power_of_two_scale)) {
    s = PowerOfTwo(s, false);
  } else if (src.Bool(p.near_power_of_two)) {
    // A hair off a power of two: quotients land a few ulps from the ties.
    const float base = static_cast<float>(PowerOfTwo(s, false));
    float f = base;
    const int64_t k = src.Int(1, 3);
    for (int64_t i = 0; i < k; ++i) f = std::nextafter(f, src.Bool(0.5) ? FLT_MAX : 0.0f);
    s = f;
  }
  return PerTensor(c.type, Float32Scale(s), static_cast<int64_t>(z));
}

void SnapConvToGrids(Builder& b, Node& conv, const QuantParams& x) {
  const GenQuant& p = b.cfg().quant;
  ChoiceSource& src = b.src();
  Tensor& w = conv.params.at("W");
  const int64_t m = w.shape[0];
  const int64_t per = w.size() / m;
  const bool per_channel = m > 1 && src.Bool(p.per_channel_weights);
  int64_t wz = 0;
  if (src.Bool(p.weight_zero_point)) wz = src.Bool(0.5) ? src.Int(1, 20) : -src.Int(1, 20);
  const bool pow2 = src.Bool(p.power_of_two_scale);
  const double qlo = src.Bool(0.3) ? -128 : -127;  // symmetric or full int8 range
  QuantParams wq;
  wq.type = QuantType::kInt8;
  wq.axis = per_channel ? 0 : -1;
  wq.scale.clear();
  wq.zero_point.clear();
  const int64_t groups = per_channel ? m : 1;
  const int64_t span = per_channel ? per : w.size();
  for (int64_t gi = 0; gi < groups; ++gi) {
    double amax = 0;
    for (int64_t i = gi * span; i < (gi + 1) * span; ++i) {
      amax = std::max(amax, std::fabs(double(w.data[size_t(i)])));
    }
    if (!(amax > 0)) amax = 1;
    double s = amax / static_cast<double>(127 - std::abs(wz));
    if (pow2) s = PowerOfTwo(s, true);
    s = Float32Scale(s);
    for (int64_t i = gi * span; i < (gi + 1) * span; ++i) {
      const double q =
          std::clamp(std::nearbyint(double(w.data[size_t(i)]) / s) + double(wz), qlo, 127.0);
      w.data[size_t(i)] = DequantizeOnnx(static_cast<float>(q), static_cast<float>(s), wz);
    }
    wq.scale.push_back(s);
    wq.zero_point.push_back(wz);
  }
  conv.quant["W"] = wq;

  auto bit = conv.params.find("B");
  // A bias grid needs a per-tensor input scale (s_x * s_w[m]).
  if (bit == conv.params.end() || x.PerAxis()) return;
  Tensor& bias = bit->second;
  double factor = 1;
  if (src.Bool(p.bias_grid_off)) {
    const double kFactors[] = {2, 0.5, 1 + std::ldexp(1.0, -10), 0.25};
    factor = kFactors[src.Int(0, 3)];
  }
  int64_t bz = 0;
  if (src.Bool(p.bias_zero_point)) bz = src.Bool(0.5) ? src.Int(1, 50) : -src.Int(1, 50);
  QuantParams bq;
  bq.type = QuantType::kInt32;
  bq.axis = 0;
  bq.scale.clear();
  bq.zero_point.clear();
  const double lim = static_cast<double>(kMaxExactInt);
  for (int64_t c = 0; c < m; ++c) {
    // Exactly the rules' expected grid, float32(s_x * s_w[m]), when the factor is 1.
    double s = static_cast<float>(x.Scale(0) * wq.Scale(c));
    if (factor != 1) s = static_cast<float>(factor * s);
    if (!(s >= FLT_MIN)) s = FLT_MIN;
    const double q = std::clamp(std::nearbyint(double(bias.data[size_t(c)]) / s) + double(bz),
                                -lim + 64, lim - 64);
    bias.data[size_t(c)] = DequantizeOnnx(static_cast<float>(q), static_cast<float>(s), bz);
    bq.scale.push_back(s);
    bq.zero_point.push_back(bz);
  }
  conv.quant["B"] = bq;
}

}  // namespace fusefuzz::gen
