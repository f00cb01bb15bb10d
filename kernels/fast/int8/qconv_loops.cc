// The straightforward integer loops: the definition the fast int8 kernels must match bit for bit.
#include <cmath>

#include "kernels/fast/int8/qconv.h"

namespace fusefuzz::int8 {

int32_t Requantize(float v, int32_t zero_point, int32_t lo, int32_t hi) {
  // Any |v| beyond 2^20 saturates for 8-bit outputs; the clamp keeps the conversion defined.
  const float limit = 1048576.0f;
  v = std::fmin(std::fmax(v, -limit), limit);
  const int32_t q =
      static_cast<int32_t>(std::nearbyint(v)) + zero_point;  // FE_TONEAREST: ties to even
  return q < lo ? lo : (q > hi ? hi : q);
}

void QConvLoops(const QConvProblem& p) {
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t oc = 0; oc < p.m; ++oc) {
      const int64_t g = oc / mg;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          int32_t acc = p.bias ? p.bias[oc] : 0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            const int64_t c = g * cg + ic;
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              if (iy < 0 || iy >= p.h) continue;  // padding reads x_zero_point: adds 0
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (ix < 0 || ix >= p.w) continue;
                const int32_t xv =
                    Load8(p.x_type, p.x, ((b * p.c + c) * p.h + iy) * p.w + ix) - p.x_zero_point;
                const int32_t wv = p.weights[((oc * cg + ic) * p.kh + ky) * p.kw + kx];
                acc += xv * wv;
              }
            }
          }
          const int64_t yi = ((b * p.m + oc) * p.oh + oy) * p.ow + ox;
          if (p.y_int32) {
            p.y_int32[yi] = acc;
            continue;
          }
          float v = static_cast<float>(acc) * p.multiplier[oc];
          if (p.residual) {
            const int32_t r = Load8(p.residual_type, p.residual, yi) - p.residual_zero_point;
            v = v + static_cast<float>(r) * p.residual_multiplier;
          }
          p.y[yi] = static_cast<uint8_t>(Requantize(v, p.y_zero_point, p.y_min, p.y_max));
        }
      }
    }
  }
}

void QRequantizeLoops(const QConvProblem& p, const int32_t* acc) {
  const int64_t plane = p.oh * p.ow;
  for (int64_t i = 0; i < p.n * p.m * plane; ++i) {
    float v = static_cast<float>(acc[i]) * p.multiplier[(i / plane) % p.m];
    if (p.residual) {
      const int32_t r = Load8(p.residual_type, p.residual, i) - p.residual_zero_point;
      v = v + static_cast<float>(r) * p.residual_multiplier;
    }
    p.y[i] = static_cast<uint8_t>(Requantize(v, p.y_zero_point, p.y_min, p.y_max));
  }
}

void QAddLoops(const QAddProblem& p) {
  for (int64_t i = 0; i < p.count; ++i) {
    const float va = static_cast<float>(Load8(p.a_type, p.a, i) - p.a_zero_point) * p.a_multiplier;
    const float vb = static_cast<float>(Load8(p.b_type, p.b, i) - p.b_zero_point) * p.b_multiplier;
    p.y[i] = static_cast<uint8_t>(Requantize(va + vb, p.y_zero_point, p.y_min, p.y_max));
  }
}

}  // namespace fusefuzz::int8
