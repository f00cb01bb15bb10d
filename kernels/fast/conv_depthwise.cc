// Depthwise conv (group == C, channel multiplier M / C) as a direct loop: each output plane
// depends on one input plane, so a GEMM would only add packing overhead. The epilogue runs on
// each finished plane while it is in cache.
#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast {

void ConvDepthwise(const Node& node, const Tensor& x, const Shape& out_shape,
                   const Epilogue& epilogue, int threads, float* out) {
  const Tensor& wt = node.params.at("W");
  const ConvGeometry g = MakeConvGeometry(node, x.shape, wt.shape, out_shape);
  const auto it = node.params.find("B");
  const float* bias = it == node.params.end() ? nullptr : it->second.data.data();
  const int64_t mult = g.m / g.c, plane = g.p();
  ParallelFor(threads, g.n * g.m, [&](int64_t task) {
    const int64_t n = task / g.m, m = task % g.m;
    float* o = out + task * plane;
    std::fill(o, o + plane, bias ? bias[m] : 0.0f);
    const float* xin = x.data.data() + (n * g.c + m / mult) * g.h * g.w;
    const float* w = wt.data.data() + m * g.kh * g.kw;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t yoff = i * g.a.dilation_h - g.a.pad_top;
      const Range ry = ValidRange(g.oh, g.h, g.a.stride_h, yoff);
      for (int64_t j = 0; j < g.kw; ++j) {
        const float wv = w[i * g.kw + j];
        const int64_t xoff = j * g.a.dilation_w - g.a.pad_left;
        const Range rx = ValidRange(g.ow, g.w, g.a.stride_w, xoff);
        for (int64_t oy = ry.lo; oy < ry.hi; ++oy) {
          const float* xrow = xin + (oy * g.a.stride_h + yoff) * g.w;
          float* orow = o + oy * g.ow;
          if (g.a.stride_w == 1) {
            for (int64_t ox = rx.lo; ox < rx.hi; ++ox) orow[ox] += wv * xrow[ox + xoff];
          } else {
            const int64_t s = g.a.stride_w;
            for (int64_t ox = rx.lo; ox < rx.hi; ++ox) orow[ox] += wv * xrow[ox * s + xoff];
          }
        }
      }
    }
    if (!epilogue.empty()) epilogue.Apply(n, m, 0, plane, o);
  });
}

}  // namespace fusefuzz::fast
