// Depthwise conv (group == C, channel multiplier M / C) as a direct loop: each output plane
// depends on one input plane, so a GEMM would only add packing overhead. The epilogue runs on
// each finished plane while it is in cache.
//
// Two loops compute the same sums in the same order (bias, then taps in (i, j) order):
// - padded (stride 1, the common case): the input plane is copied once into a zero-bordered
//   buffer, and the output is accumulated at the buffer's width, so that every tap is ONE
//   contiguous multiply-add over oh * wp floats. The loops are long and branch-free even for
//   7x7 planes, where the per-row loops below spend their time in loop overhead. Border taps
//   add w * 0, which is exact because params are finite (the verifier refuses others). A
//   geometry whose padded buffer would be much larger than the plane (hostile pads or
//   dilations) takes the general loop.
// - general: per tap, per output row, over the output columns whose input is in range.
#include <vector>

#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

struct PaddedPlane {
  int64_t hp = 0, wp = 0;    // buffer rows and columns (rows of oh + (kh - 1) * dh, ...)
  int64_t size = 0;          // floats in the buffer, incl. the tail the last taps overrun into
  std::vector<int64_t> off;  // per tap (i, j): where its reads start in the buffer
};

// The padded layout of a stride-1 plane, or size 0 when the padded path does not apply.
PaddedPlane PaddedLayout(const ConvGeometry& g) {
  PaddedPlane pp;
  if (g.a.stride_h != 1 || g.a.stride_w != 1 || g.oh <= 0 || g.ow <= 0) return pp;
  pp.hp = g.oh + (g.kh - 1) * g.a.dilation_h;
  pp.wp = g.ow + (g.kw - 1) * g.a.dilation_w;
  const int64_t size = pp.hp * pp.wp + (g.kw - 1) * g.a.dilation_w;
  // Normal layers pad by a row or two: the buffer stays close to the plane.
  if (size > 4 * g.p() + 4096) return pp;
  pp.size = size;
  for (int64_t i = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j)
      pp.off.push_back(i * g.a.dilation_h * pp.wp + j * g.a.dilation_w);
  }
  return pp;
}

// 3x3 and 5x5 (nearly every depthwise layer): all taps of an element summed in registers, one
// pass over the plane instead of one per tap. Same order of additions as the per-tap passes
// (bias, then taps in (i, j) order), so the same result.
template <int K>
void AccumulateFixed(const float* xp, const int64_t* off, const float* w, float b, int64_t len,
                     float* acc) {
  for (int64_t q = 0; q < len; ++q) {
    float s = b;
    for (int t = 0; t < K; ++t) s += w[t] * xp[q + off[t]];
    acc[q] = s;
  }
}

// o[oy, ox] = b + sum_{i,j} w[i, j] * xin[oy + i*dh - pt, ox + j*dw - pl] (zero outside), using
// buffers xp (pp.size floats) and acc (oh * wp floats).
void PlanePadded(const ConvGeometry& g, const PaddedPlane& pp, const float* xin, const float* w,
                 float b, float* xp, float* acc, float* o) {
  std::fill(xp, xp + pp.size, 0.0f);
  // Buffer row r holds input row r - pt; column c holds input column c - pl.
  for (int64_t r = 0; r < pp.hp; ++r) {
    const int64_t iy = r - g.a.pad_top;
    if (iy < 0 || iy >= g.h) continue;
    const int64_t c0 = std::max<int64_t>(0, g.a.pad_left);
    const int64_t c1 = std::min(pp.wp, g.w + g.a.pad_left);
    for (int64_t c = c0; c < c1; ++c) xp[r * pp.wp + c] = xin[iy * g.w + c - g.a.pad_left];
  }
  const int64_t len = g.oh * pp.wp;
  const int64_t taps = g.kh * g.kw;
  if (taps == 9) {
    AccumulateFixed<9>(xp, pp.off.data(), w, b, len, acc);
  } else if (taps == 25) {
    AccumulateFixed<25>(xp, pp.off.data(), w, b, len, acc);
  } else {
    std::fill(acc, acc + len, b);
    for (int64_t t = 0; t < taps; ++t) {
      const float wv = w[t];
      const float* src = xp + pp.off[static_cast<size_t>(t)];
      for (int64_t q = 0; q < len; ++q) acc[q] += wv * src[q];
    }
  }
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    std::copy(acc + oy * pp.wp, acc + oy * pp.wp + g.ow, o + oy * g.ow);
  }
}

void PlaneGeneral(const ConvGeometry& g, const float* xin, const float* w, float b, float* o) {
  std::fill(o, o + g.p(), b);
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
}

}  // namespace

void ConvDepthwise(const Node& node, const Tensor& x, const Shape& out_shape,
                   const Epilogue& epilogue, int threads, float* out) {
  const Tensor& wt = node.params.at("W");
  const ConvGeometry g = MakeConvGeometry(node, x.shape, wt.shape, out_shape);
  const auto it = node.params.find("B");
  const float* bias = it == node.params.end() ? nullptr : it->second.data.data();
  const int64_t mult = g.m / g.c, plane = g.p(), taps = g.kh * g.kw;
  const PaddedPlane pp = PaddedLayout(g);
  ParallelFor(threads, g.n * g.m, [&](int64_t task) {
    const int64_t n = task / g.m, m = task % g.m;
    float* o = out + task * plane;
    const float* xin = x.data.data() + (n * g.c + m / mult) * g.h * g.w;
    const float* w = wt.data.data() + m * taps;
    const float b = bias ? bias[m] : 0.0f;
    if (pp.size > 0) {
      // Per thread, reused across planes and calls: no allocation per plane.
      thread_local std::vector<float> xp, acc;
      xp.resize(static_cast<size_t>(pp.size));
      acc.resize(static_cast<size_t>(g.oh * pp.wp));
      PlanePadded(g, pp, xin, w, b, xp.data(), acc.data(), o);
      if (xp.capacity() > (size_t{1} << 22)) xp = {}, acc = {};  // keep no huge buffers around
    } else {
      PlaneGeneral(g, xin, w, b, o);
    }
    if (!epilogue.empty()) epilogue.Apply(n, m, 0, plane, o);
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
