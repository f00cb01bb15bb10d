// Reference QLinearConv: its meaning is the unfused sequence
//   Q_y(act(DQ_x(x) conv DQ_w(W) + B s_x s_w [+ DQ_r(r)]))
// in fp64, with the grid facts of the output: t before the rounding, and E = the spread of the
// inputs through the weights + the integer kernel's float32 requantization (qconv.h).
#include <algorithm>
#include <cmath>

#include "ir/verifier.h"
#include "kernels/reference/quant_ref.h"

namespace fusefuzz::ref {

RefTensor RunQLinearConv(const Node& n, const Inputs& in) {
  const RefTensor& x = *in[0];
  const QuantParams &qx = n.quant.at("x"), &qw = n.quant.at("w"), &qy = n.quant.at("y");
  CheckIntegers(n, 0, x, qx.type);
  const ConvAttrs a = GetConvAttrs(n);
  const Tensor& w = n.params.at("W");
  auto b_it = n.params.find("B");
  const bool has_bias = b_it != n.params.end();
  const double sx = qx.scale[0], sy = qy.scale[0];
  const double zx = static_cast<double>(qx.zero_point[0]);
  const int64_t zy = qy.zero_point[0];

  const int64_t batch = x.shape[0], in_h = x.shape[2], in_w = x.shape[3];
  const int64_t out_c = w.shape[0], group_c = w.shape[1], k_h = w.shape[2], k_w = w.shape[3];
  const int64_t out_per_group = out_c / a.group;
  const int64_t out_h =
      ConvOutputSize(in_h, k_h, a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom);
  const int64_t out_w =
      ConvOutputSize(in_w, k_w, a.stride_w, a.dilation_w, a.pad_left, a.pad_right);
  RefTensor y = Zeros({batch, out_c, out_h, out_w});
  y.grid_t.resize(y.value.size());
  y.grid_e.resize(y.value.size());
  y.grid_es.resize(y.value.size());
  y.grid_qmin = qy.qmin();
  y.grid_qmax = qy.qmax();

  const RefTensor* r = nullptr;
  const QuantParams* qr = nullptr;
  if (in.size() == 2) {
    r = in[1];
    qr = &n.quant.at("r");
    CheckIntegers(n, 1, *r, qr->type);
  }
  // The activation step, if any (the verifier allows Relu, Relu6, Clip last).
  Op act = Op::Identity;
  double lo = -INFINITY, hi = INFINITY;
  for (const auto& s : n.epilogue) {
    if (s.kind != EpilogueKind::kActivation) continue;
    act = s.act;
    if (act == Op::Relu) lo = 0;
    if (act == Op::Relu6) lo = 0, hi = 6;
    if (act == Op::Clip) {
      lo = AttrFloat(Op::Clip, s.attrs, "min", NodeWhere(n));
      hi = AttrFloat(Op::Clip, s.attrs, "max", NodeWhere(n));
    }
  }

  SpreadSum spread_s;
  for (int64_t nb = 0; nb < batch; ++nb) {
    for (int64_t m = 0; m < out_c; ++m) {
      const double sw = qw.Scale(m);
      const int64_t first_in_c = (m / out_per_group) * group_c;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          // acc in integers (exact in double: |acc| < 2^53), and the spread through |W|.
          double acc =
              has_bias ? static_cast<double>(b_it->second.data[static_cast<size_t>(m)]) : 0;
          // spread: L1 through |W|; spread2: in quadrature, sum of (w D)^2 (grid_es).
          double spread = 0, peak = 0, acc_mag = std::fabs(acc);
          spread_s.Clear();
          for (int64_t c = 0; c < group_c; ++c) {
            for (int64_t kh = 0; kh < k_h; ++kh) {
              const int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
              if (ih < 0 || ih >= in_h) continue;  // padding reads the zero point: adds 0
              for (int64_t kw = 0; kw < k_w; ++kw) {
                const int64_t iw = ow * a.stride_w - a.pad_left + kw * a.dilation_w;
                if (iw < 0 || iw >= in_w) continue;
                const size_t xi = At4(x.shape, nb, first_in_c + c, ih, iw);
                const double wv =
                    w.data[static_cast<size_t>(((m * group_c + c) * k_h + kh) * k_w + kw)];
                acc += (x.value[xi] - zx) * wv;
                acc_mag += std::fabs((x.value[xi] - zx) * wv);
                peak = Peak(std::fmax(peak, x.peak[xi]), wv);
                spread += std::fabs(wv) * IntegerSpread(x, xi);
                spread_s.Add(SpreadKey(x, xi), std::fabs(wv) * IntegerSpreadSigma(x, xi));
              }
            }
          }
          const size_t yi = At4(y.shape, nb, m, oh, ow);
          const double conv = acc * sx * sw;  // DQ(x) conv DQ(W) + B s_x s_w
          double res = 0, res_spread = 0, res_spread_s = 0;
          if (r) {
            res = (r->value[yi] - static_cast<double>(qr->zero_point[0])) * qr->scale[0];
            res_spread = IntegerSpread(*r, yi) * qr->scale[0];
            res_spread_s = IntegerSpreadSigma(*r, yi) * qr->scale[0];
          }
          double v = conv + res;
          y.peak[yi] = Peak(Peak(peak, acc_mag, acc_mag * sx * sw),
                            std::fabs(conv) + std::fabs(res), v / sy);
          if (r) y.peak[yi] = std::fmax(y.peak[yi], r->peak[yi]);
          if (act == Op::Clip && lo > hi) {
            v = hi;  // ONNX Clip with min > max: max everywhere
          } else {
            v = std::min(std::max(v, lo), hi);
          }
          y.grid_t[yi] = v / sy + static_cast<double>(zy);
          y.value[yi] = std::clamp(std::nearbyint(v / sy) + static_cast<double>(zy),
                                   static_cast<double>(qy.qmin()), static_cast<double>(qy.qmax()));
          // The activation is 1-Lipschitz, so deviations before it bound those after it.
          // Requantization (float32): float(acc), the multiplier s_x s_w / s_y, their product;
          // the residual's float(r - z_r), its multiplier and product, and the sum.
          // The clamp bounds Q(lo), Q(hi) are quantized in float32 (x / s rounds once more).
          // Each rounding is relative to the value the engine holds, which the carried
          // spread may move away from the reference's.
          const double moved = spread * sx * sw + res_spread;
          y.grid_e[yi] = moved / sy + 4 * kU * (std::fabs(conv) + std::fabs(res) + moved) / sy +
                         2 * kU * (std::fabs(v) + moved) / sy;
          // Under the sigma machinery the taps' spreads add in quadrature (docs/oracle.md,
          // "Carried spread in quadrature"), except a declared half-away rule's systematic ties.
          const bool systematic = x.grid_ties_either || (r && r->grid_ties_either);
          const double moved_s =
              systematic ? moved : Quadrature(spread_s.Total() * sx * sw, res_spread_s);
          y.grid_es[yi] =
              std::min(y.grid_e[yi],
                       moved_s / sy + 4 * kU * (std::fabs(conv) + std::fabs(res) + moved_s) / sy +
                           2 * kU * (std::fabs(v) + moved_s) / sy);
        }
      }
    }
  }
  SetGridMagnitudes(&y);
  return y;
}

}  // namespace fusefuzz::ref
