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
// - flat (AVX2 / AVX-512 copies, stride 1 with OW == W, e.g. every "same"-padded layer): the
//   plane is one flat vector loop; tap (i, j) reads the input at a constant flat shift, and a
//   per-(vector, tap) lane mask, computed once per call, zeroes the lanes whose input is in the
//   padding (masked loads do not fault). No copies; a task is a batch of planes, so that 7x7
//   planes do not pay a per-plane setup. Same sums in the same order as the other two loops.
#include <cstdint>
#include <utility>
#include <vector>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define FUSEFUZZ_DW_FLAT 1
#endif

#include "kernels/fast/conv_depthwise_blocked.h"
#include "kernels/fast/conv_depthwise_small.h"
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

#ifdef FUSEFUZZ_DW_FLAT
#if defined(__AVX512F__)
constexpr int64_t kVec = 16;
using Vec = __m512;
using Mask = __mmask16;  // as stored in the table and as used
inline Mask LaneMask(const bool* on) {
  unsigned m = 0;
  for (int l = 0; l < kVec; ++l) m |= on[l] ? 1u << l : 0u;
  return static_cast<Mask>(m);
}
inline Mask Use(Mask m) { return m; }
inline Vec Splat(float v) { return _mm512_set1_ps(v); }
inline void StoreMasked(Mask m, float* p, Vec v) { _mm512_mask_storeu_ps(p, m, v); }
// acc + w * x on the lanes of m, acc elsewhere. Safe: all 16 lanes of p are readable memory.
template <bool Safe>
inline Vec TapFma(Vec acc, Vec w, const float* p, Mask m) {
  return _mm512_mask3_fmadd_ps(w, Safe ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p), acc, m);
}
#else
constexpr int64_t kVec = 8;
using Vec = __m256;
struct Mask {  // as stored in the table (a vector type would lose its alignment in std::vector)
  int32_t lane[kVec];
};
inline Mask LaneMask(const bool* on) {
  Mask m;
  for (int l = 0; l < kVec; ++l) m.lane[l] = on[l] ? -1 : 0;
  return m;
}
inline __m256i Use(const Mask& m) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.lane));
}
inline Vec Splat(float v) { return _mm256_set1_ps(v); }
inline void StoreMasked(__m256i m, float* p, Vec v) { _mm256_maskstore_ps(p, m, v); }
// acc + w * x, x zero off the lanes of m. Safe: all 8 lanes of p are readable memory.
template <bool Safe>
inline Vec TapFma(Vec acc, Vec w, const float* p, __m256i m) {
  const Vec x =
      Safe ? _mm256_and_ps(_mm256_loadu_ps(p), _mm256_castsi256_ps(m)) : _mm256_maskload_ps(p, m);
  return _mm256_fmadd_ps(w, x, acc);
}
#endif

// The flat layout of a stride-1, OW == W geometry: per tap its flat input shift, per (vector,
// tap) the lanes whose input lies in the plane, per vector the lanes inside the output plane.
struct FlatPlane {
  int64_t vecs = 0;
  int64_t lo = 0, hi = 0;      // the flat offsets (from the plane start) that loads touch
  std::vector<int64_t> shift;  // [taps]
  std::vector<Mask> in;        // [vecs * taps]
  std::vector<Mask> out;       // [vecs]
};

// Empty (vecs == 0) when the flat loop does not apply or its mask table would be large.
FlatPlane FlatLayout(const ConvGeometry& g) {
  FlatPlane fp;
  const ConvAttrs& a = g.a;
  const int64_t taps = g.kh * g.kw, vecs = (g.p() + kVec - 1) / kVec;
  // Measured (AVX2, docs/kernels.md): ahead of the padded loop on 7x7 planes, behind it on
  // 56x56 ones, where the per-tap masks cost more than the copy saves.
  if (a.stride_h != 1 || a.stride_w != 1 || g.ow != g.w || g.p() <= 0 || g.p() > 1024 ||
      vecs * taps * static_cast<int64_t>(sizeof(Mask)) > (int64_t{1} << 18)) {
    return fp;
  }
  fp.vecs = vecs;
  for (int64_t i = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j) {
      fp.shift.push_back((i * a.dilation_h - a.pad_top) * g.w + j * a.dilation_w - a.pad_left);
    }
  }
  fp.lo = *std::min_element(fp.shift.begin(), fp.shift.end());
  fp.hi = (vecs - 1) * kVec + *std::max_element(fp.shift.begin(), fp.shift.end()) + kVec;
  bool on[kVec];
  for (int64_t v = 0; v < vecs; ++v) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        for (int64_t l = 0; l < kVec; ++l) {
          const int64_t p = v * kVec + l, oy = p / g.ow, ox = p % g.ow;
          const int64_t iy = oy + i * a.dilation_h - a.pad_top;
          const int64_t ix = ox + j * a.dilation_w - a.pad_left;
          on[l] = p < g.p() && iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        }
        fp.in.push_back(LaneMask(on));
      }
    }
    for (int64_t l = 0; l < kVec; ++l) on[l] = v * kVec + l < g.p();
    fp.out.push_back(LaneMask(on));
  }
  return fp;
}

// Input lanes outside the plane are masked off, so the load address may lie outside it: form it
// as an integer (no out-of-bounds pointer arithmetic).
inline const float* Shifted(const float* base, int64_t shift) {
  return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(base) +
                                        static_cast<uintptr_t>(shift * 4));
}

// Vectors [v0, v0 + G) of one plane: G independent accumulators (the FMA latency is hidden
// across vectors, not by reordering a sum), taps in order. K: taps (0: `taps` at run time).
template <bool Safe, int K, int G>
void FlatGroup(const FlatPlane& fp, int64_t taps, int64_t v0, const float* xin, const float* w,
               float b, float* o) {
  Vec acc[G];
  for (int g = 0; g < G; ++g) acc[g] = Splat(b);
  const Mask* in = fp.in.data() + v0 * taps;
  for (int64_t t = 0; t < (K > 0 ? K : taps); ++t) {
    const Vec wt = Splat(w[t]);
    const int64_t sh = fp.shift[static_cast<size_t>(t)];
    for (int g = 0; g < G; ++g) {
      acc[g] = TapFma<Safe>(acc[g], wt, Shifted(xin, (v0 + g) * kVec + sh), Use(in[g * taps + t]));
    }
  }
  for (int g = 0; g < G; ++g) {
    StoreMasked(Use(fp.out[static_cast<size_t>(v0 + g)]), o + (v0 + g) * kVec, acc[g]);
  }
}

constexpr int kGroup = 8;

template <bool Safe, int K, int... G>
void FlatTail(int r, const FlatPlane& fp, int64_t taps, int64_t v0, const float* xin,
              const float* w, float b, float* o, std::integer_sequence<int, G...>) {
  // r in [1, kGroup): the group template of exactly r vectors.
  ((r == G + 1 ? FlatGroup<Safe, K, G + 1>(fp, taps, v0, xin, w, b, o) : void()), ...);
}

template <bool Safe, int K>
void PlaneFlat(const FlatPlane& fp, int64_t taps, const float* xin, const float* w, float b,
               float* o) {
  int64_t v = 0;
  for (; v + kGroup <= fp.vecs; v += kGroup) FlatGroup<Safe, K, kGroup>(fp, taps, v, xin, w, b, o);
  if (v < fp.vecs) {
    FlatTail<Safe, K>(static_cast<int>(fp.vecs - v), fp, taps, v, xin, w, b, o,
                      std::make_integer_sequence<int, kGroup - 1>{});
  }
}

template <bool Safe>
void PlaneFlatTaps(const FlatPlane& fp, int64_t taps, const float* xin, const float* w, float b,
                   float* o) {
  if (taps == 9) {
    PlaneFlat<Safe, 9>(fp, taps, xin, w, b, o);
  } else if (taps == 25) {
    PlaneFlat<Safe, 25>(fp, taps, xin, w, b, o);
  } else {
    PlaneFlat<Safe, 0>(fp, taps, xin, w, b, o);
  }
}
#endif  // FUSEFUZZ_DW_FLAT

}  // namespace

void ConvDepthwise(const Node& node, const Tensor& x, const Shape& out_shape,
                   const Epilogue& epilogue, int threads, float* out) {
  const Tensor& wt = node.params.at("W");
  const ConvGeometry g = MakeConvGeometry(node, x.shape, wt.shape, out_shape);
  const auto it = node.params.find("B");
  const float* bias = it == node.params.end() ? nullptr : it->second.data.data();
  if (DepthwiseSmall(g, x.data.data(), wt.data.data(), bias, epilogue, threads, out)) return;
  if (DepthwiseBlocked(g, x.data.data(), wt.data.data(), bias, epilogue, threads, out)) return;
  const int64_t mult = g.m / g.c, plane = g.p(), taps = g.kh * g.kw;
#ifdef FUSEFUZZ_DW_FLAT
  const FlatPlane fp = FlatLayout(g);
  if (fp.vecs > 0) {
    // Batches of about 16K output elements: fixed by the geometry, not by the thread count.
    const int64_t planes = g.n * g.m, batch = std::max<int64_t>(1, (int64_t{1} << 14) / plane);
    const bool batch_epilogue = PositionFree(epilogue);
    ParallelFor(threads, (planes + batch - 1) / batch, [&](int64_t task) {
      const int64_t first = task * batch, last = std::min(planes, first + batch);
      for (int64_t pl = first; pl < last; ++pl) {
        const int64_t n = pl / g.m, m = pl % g.m;
        const float* xin = x.data.data() + (n * g.c + m / mult) * g.h * g.w;
        const float* w = wt.data.data() + m * taps;
        const float b = bias ? bias[m] : 0.0f;
        float* o = out + pl * plane;
        // Plain loads where every lane read lies inside the input tensor (all planes but the
        // first and last ones, typically), masked loads elsewhere; same values either way.
        const int64_t at = xin - x.data.data();
        if (at + fp.lo >= 0 && at + fp.hi <= x.size()) {
          PlaneFlatTaps<true>(fp, taps, xin, w, b, o);
        } else {
          PlaneFlatTaps<false>(fp, taps, xin, w, b, o);
        }
        if (!epilogue.empty() && !batch_epilogue) epilogue.Apply(n, m, 0, plane, o);
      }
      // Position-free steps: one call over the batch (n, m only matter to the other kinds).
      if (!epilogue.empty() && batch_epilogue) {
        epilogue.Apply(first / g.m, first % g.m, 0, (last - first) * plane, out + first * plane);
      }
    });
    return;
  }
#endif
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
