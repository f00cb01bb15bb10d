// Reference Conv and FusedConv: the direct 7-deep loop of the ONNX Conv definition, then (for
// FusedConv) the epilogue steps in order, each computed exactly as its unfused op would be.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/verifier.h"
#include "kernels/reference/quant_ref.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {
namespace {

RefTensor Convolve(const Node& n, const RefTensor& x) {
  const ConvAttrs a = GetConvAttrs(n);
  const RefTensor w = FromFloat(n.params.at("W"));
  auto b_it = n.params.find("B");
  const bool has_bias = b_it != n.params.end();
  const RefTensor b = has_bias ? FromFloat(b_it->second) : RefTensor{};

  const int64_t batch = x.shape[0], in_h = x.shape[2], in_w = x.shape[3];
  const int64_t out_c = w.shape[0], group_c = w.shape[1], k_h = w.shape[2], k_w = w.shape[3];
  const int64_t out_per_group = out_c / a.group;
  const int64_t out_h =
      ConvOutputSize(in_h, k_h, a.stride_h, a.dilation_h, a.pad_top, a.pad_bottom);
  const int64_t out_w =
      ConvOutputSize(in_w, k_w, a.stride_w, a.dilation_w, a.pad_left, a.pad_right);
  RefTensor y = Zeros({batch, out_c, out_h, out_w});
  y.open_sum = static_cast<double>(group_c * k_h * k_w);
  // Every weight of an output channel is a leaf of each of its elements, the taps that fall on
  // the zero padding too (an engine that pads explicitly multiplies them by 0), and its bias.
  std::vector<double> channel_peak(static_cast<size_t>(out_c), 0.0);
  const size_t per_channel = static_cast<size_t>(group_c * k_h * k_w);
  for (size_t wi = 0; wi < w.value.size(); ++wi) {
    double& p = channel_peak[wi / per_channel];
    p = Peak(p, w.value[wi]);
  }
  if (has_bias) {
    for (size_t m = 0; m < channel_peak.size(); ++m) {
      channel_peak[m] = Peak(channel_peak[m], b.value[m]);
    }
  }

  // An integer-valued input's sigma is its carried spread alone (SetGridMagnitudes).
  const bool integers = !x.grid_t.empty();
  const bool dequantized =
      !integers && x.spread.size() == x.value.size() && x.spread_key.size() == x.value.size();
  SpreadSum spread;
  for (int64_t nb = 0; nb < batch; ++nb) {
    for (int64_t m = 0; m < out_c; ++m) {
      const int64_t first_in_c = (m / out_per_group) * group_c;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          double acc = has_bias ? b.value[static_cast<size_t>(m)] : 0.0;
          double mag = has_bias ? b.mag[static_cast<size_t>(m)] : 0.0;
          // Error scale: the input errors through the weights (independent, so in quadrature),
          // and the rounding of the float32 sum itself.
          double carried = 0, terms_sq = 0, taps = 0;
          spread.Clear();
          double peak = channel_peak[static_cast<size_t>(m)],
                 abs_sum = has_bias ? std::fabs(acc) : 0;
          for (int64_t c = 0; c < group_c; ++c) {
            // Plane of input channel first_in_c + c and the (m, c) kernel; same sum order as
            // the ONNX definition (c, kh, kw).
            const size_t x_plane = At4(x.shape, nb, first_in_c + c, 0, 0);
            const size_t w_plane = At4(w.shape, m, c, 0, 0);
            for (int64_t kh = 0; kh < k_h; ++kh) {
              const int64_t ih = oh * a.stride_h - a.pad_top + kh * a.dilation_h;
              if (ih < 0 || ih >= in_h) continue;  // zero padding adds nothing
              for (int64_t kw = 0; kw < k_w; ++kw) {
                const int64_t iw = ow * a.stride_w - a.pad_left + kw * a.dilation_w;
                if (iw < 0 || iw >= in_w) continue;
                const size_t xi = x_plane + static_cast<size_t>(ih * in_w + iw);
                const size_t wi = w_plane + static_cast<size_t>(kh * k_w + kw);
                const double term = w.value[wi] * x.value[xi];
                acc += term;
                mag += w.mag[wi] * x.mag[xi];
                if (integers) {
                  spread.Add(SpreadKey(x, xi), std::fabs(w.value[wi]) * x.sigma[xi]);
                } else if (dequantized) {
                  // The float part in quadrature, the spread grouped by SpreadKey.
                  const double sp = std::min(x.spread[xi], x.sigma[xi]);
                  const double fl = x.sigma[xi] - sp;
                  carried += w.value[wi] * w.value[wi] * fl * fl;
                  spread.Add(x.spread_key[xi], std::fabs(w.value[wi]) * sp);
                } else {
                  carried += w.value[wi] * w.value[wi] * x.sigma[xi] * x.sigma[xi];
                }
                terms_sq += term * term;
                taps += 1;
                peak = std::fmax(peak, x.peak[xi]);
                abs_sum += std::fabs(term);
              }
            }
          }
          const size_t yi = At4(y.shape, nb, m, oh, ow);
          y.value[yi] = acc;
          y.mag[yi] = mag;
          y.peak[yi] = Peak(peak, abs_sum);  // partial sums: at most the sum of |terms|
          const double bias = has_bias ? std::fabs(b.value[static_cast<size_t>(m)]) : 0.0;
          const double own = SumRoundingSigma(taps, std::fabs(acc) + bias, std::sqrt(terms_sq));
          // A carried integer spread (all of an integer-valued input's sigma, the `spread` part
          // of a DequantizeLinear's) is whole steps, not a Gaussian error: the float errors and
          // the sum's rounding add to it (docs/oracle.md, "Carried spread in quadrature": 8
          // sigmas of each, summed).
          y.sigma[yi] = Quadrature(std::sqrt(carried), own) + spread.Total();
        }
      }
    }
  }
  return y;
}

// y = y * scale[c] + shift[c], rounded as the unfused Mul then Add by [1,C,1,1] constants.
void ScaleShift(const EpilogueStep& s, RefTensor* y) {
  const RefTensor scale = FromFloat(s.params.at("scale"));
  const RefTensor shift = FromFloat(s.params.at("shift"));
  const int64_t channels = y->shape[1], inner = InnerSize(y->shape, 2);
  for (size_t i = 0; i < y->value.size(); ++i) {
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    const double product = y->value[i] * scale.value[c];
    y->value[i] = product + shift.value[c];
    y->mag[i] = scale.mag[c] * y->mag[i] + shift.mag[c];
    y->peak[i] = Peak(Peak(y->peak[i], scale.value[c], shift.value[c]), product, y->value[i]);
    y->sigma[i] = Quadrature(std::fabs(scale.value[c]) * y->sigma[i],
                             kU * (std::fabs(product) + std::fabs(y->value[i])) +
                                 FoldedAddendSigma(y->open_sum, std::fabs(shift.value[c])));
  }
}

}  // namespace

RefTensor RunConv(const Node& n, const Inputs& in) {
  RefTensor y = Convolve(n, *in[0]);
  AdmitBiasRounding(n, *in[0], &y);  // quantized models only (a weight grid and a DQ input)
  const std::string where = NodeWhere(n);
  for (size_t k = 0; k < n.epilogue.size(); ++k) {
    const EpilogueStep& s = n.epilogue[k];
    const std::string step_where = where + " epilogue step " + std::to_string(k);
    switch (s.kind) {
      case EpilogueKind::kScaleShift:
        ScaleShift(s, &y);
        break;
      case EpilogueKind::kAdd:
        y = Elementwise(Op::Add, y, *in.at(static_cast<size_t>(s.input)));
        break;
      case EpilogueKind::kActivation:
        ApplyActivation(s.act, s.attrs, s.params, step_where, &y);
        break;
      case EpilogueKind::kClamp:
        ApplyActivation(Op::Clip, s.attrs, {}, step_where, &y);
        break;
    }
  }
  return y;
}

}  // namespace fusefuzz::ref
