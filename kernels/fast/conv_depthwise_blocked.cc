// Channel-blocked depthwise conv for the AVX-512 copy (docs/kernels.md, "Convolution").
//
// A task is 16 channels of one image. Their input planes are transposed (16x16 register
// transposes) into a zero-bordered buffer [hp][wp][16]: one vector per input pixel holds the 16
// channels. Every tap of every output pixel is then one aligned load and one FMA with no lane
// masks and no per-plane setup, whatever the plane size (7x7 planes are where the per-plane
// loops spend their time in overhead). The output [P][16] is transposed back into the 16 NCHW
// planes. Per element the sum is the same as in conv_depthwise.cc: bias, then the taps in
// (i, j) order, one FMA each.
#include "kernels/fast/conv_depthwise_blocked.h"

#include <algorithm>
#include <array>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace fusefuzz::fast::FUSEFUZZ_ISA {

bool PositionFree(const Epilogue& epilogue) {
  for (const PostOp& op : epilogue.ops()) {
    switch (op.kind) {
      case EpilogueKind::kActivation:
        if (op.act.op == Op::PRelu) return false;
        break;
      case EpilogueKind::kClamp:
        break;
      case EpilogueKind::kScaleShift:
      case EpilogueKind::kAdd:
        return false;
    }
  }
  return true;
}

#if !defined(__AVX512F__)

bool DepthwiseBlocked(const ConvGeometry&, const float*, const float*, const float*,
                      const Epilogue&, int, float*) {
  return false;
}

#else

namespace {

constexpr int64_t kC = 16;        // channels per block (one zmm)
constexpr int64_t kMaxTaps = 25;  // weight vectors kept on the stack
constexpr int kUnroll = 8;        // output pixels in flight (hides the FMA latency)
constexpr int64_t kNarrow = 4;    // at most this many pixels left: no 16x16 transpose

// r[i] = row i of a 16x16 block -> r[i] = column i.
inline void Transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Now 128-bit lane L of r[4i + j] holds rows 4i..4i+3 of column 4L + j.
  __m512 o[16];
  for (int j = 0; j < 4; ++j) {
    const __m512 ab_lo = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x44);
    const __m512 ab_hi = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xEE);
    const __m512 cd_lo = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x44);
    const __m512 cd_hi = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xEE);
    o[j] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0x88);
    o[4 + j] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0xDD);
    o[8 + j] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0x88);
    o[12 + j] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = o[i];
}

inline __mmask16 First(int64_t n) {
  return static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
}

struct Blocked {
  const ConvGeometry& g;
  int64_t hp, wp;  // the padded buffer's rows and columns
  const float* x;
  const float* w;
  const float* bias;
  const Epilogue& epilogue;
  bool batch_epilogue;
  bool relu_only;  // the epilogue is one Relu: applied in registers (x < 0 ? 0 : x, NaN kept)
  float* out;

  // Image n, channels [c0, c0 + nc): buf (hp * wp * 16, its border already zero), o (P * 16).
  void Run(int64_t n, int64_t c0, int64_t nc, float* buf, float* o) const {
    const ConvAttrs& a = g.a;
    const int64_t hw = g.h * g.w, plane = g.p(), taps = g.kh * g.kw;
    // In: 16 pixels of 16 channels at a time, transposed, to their padded positions.
    const float* xc = x + (n * g.c + c0) * hw;
    const __mmask16 chans = First(nc);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i in_idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(hw)));
    // Locals: the stores through `buf` could alias members as far as the compiler knows.
    const int64_t pt = a.pad_top, pl = a.pad_left, hp_ = hp, wp_ = wp, w_ = g.w;
    int64_t iy = 0, ix = 0;  // input pixel p
    const bool whole = g.h + pt <= hp && g.w + pl <= wp;
    float* dst = buf + (pt * wp + pl) * kC;  // where input pixel p goes, when `whole`
    const int64_t row_skip = (wp - g.w) * kC;
    for (int64_t p = 0; p < hw; p += 16) {
      const int64_t count = std::min<int64_t>(16, hw - p);
      alignas(64) __m512 r[16];
      if (count <= kNarrow) {  // a few last pixels: gather them rather than transpose 16
        for (int64_t l = 0; l < count; ++l) {
          r[l] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), chans, in_idx, xc + p + l, 4);
        }
      } else {
        const __mmask16 lanes = First(hw - p);
        for (int64_t c = 0; c < 16; ++c) {
          r[c] = c < nc ? _mm512_maskz_loadu_ps(lanes, xc + c * hw + p) : _mm512_setzero_ps();
        }
        Transpose16(r);
      }
      if (whole) {  // every input pixel has its place in the buffer: walk a pointer
        for (int64_t l = 0; l < count; ++l) {
          _mm512_store_ps(dst, r[l]);
          dst += kC;
          if (++ix == w_) ix = 0, dst += row_skip;
        }
      } else {
        for (int64_t l = 0; l < count; ++l) {
          const int64_t by = iy + pt, bx = ix + pl;
          if (by < hp_ && bx < wp_) _mm512_store_ps(buf + (by * wp_ + bx) * kC, r[l]);
          if (++ix == w_) ix = 0, ++iy;
        }
      }
    }
    // Weights: rows of `taps` floats per channel, transposed 16 taps at a time into one vector
    // per tap (16 channels).
    __m512 wv[32];
    for (int64_t t0 = 0; t0 < taps; t0 += 16) {
      __m512 r[16];
      for (int64_t c = 0; c < 16; ++c) {
        r[c] = c < nc ? _mm512_maskz_loadu_ps(First(taps - t0), w + (c0 + c) * taps + t0)
                      : _mm512_setzero_ps();
      }
      Transpose16(r);
      for (int64_t t = 0; t < 16; ++t) wv[t0 + t] = r[t];
    }
    const __m512 b = bias ? _mm512_maskz_loadu_ps(chans, bias + c0) : _mm512_setzero_ps();
    // Compute: kUnroll output positions at a time (across rows); a last partial group repeats
    // its last position (computed twice, stored once).
    int64_t tap_off[kMaxTaps];
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        tap_off[i * g.kw + j] = (i * a.dilation_h * wp + j * a.dilation_w) * kC;
      }
    }
    const int64_t row_step = a.stride_h * wp * kC, col_step = a.stride_w * kC, ow = g.ow;
    int64_t oy = 0, ox = 0;  // output position q
    for (int64_t q = 0; q < plane; q += kUnroll) {
      const float* src[kUnroll];
      for (int u = 0; u < kUnroll; ++u) {
        src[u] = buf + oy * row_step + ox * col_step;
        if (q + u + 1 < plane && ++ox == ow) ox = 0, ++oy;
      }
      __m512 acc[kUnroll];
      for (int u = 0; u < kUnroll; ++u) acc[u] = b;
      for (int64_t t = 0; t < taps; ++t) {
        const __m512 wt = wv[t];
        const int64_t off = tap_off[t];
        for (int u = 0; u < kUnroll; ++u) {
          acc[u] = _mm512_fmadd_ps(wt, _mm512_load_ps(src[u] + off), acc[u]);
        }
      }
      const int64_t count = std::min<int64_t>(kUnroll, plane - q);
      for (int u = 0; u < kUnroll; ++u) {
        // max(0, x) returns x when x is NaN, -0 for -0: exactly x < 0 ? 0 : x.
        if (relu_only) acc[u] = _mm512_max_ps(_mm512_setzero_ps(), acc[u]);
        if (u < count) _mm512_store_ps(o + (q + u) * kC, acc[u]);
      }
    }
    // Out: 16 pixels at a time, transposed back into the channel planes.
    float* oc = out + (n * g.m + c0) * plane;
    for (int64_t p = 0; p < plane; p += 16) {
      if (plane - p <= kNarrow) {  // a few last pixels: scalar stores rather than a transpose
        for (int64_t l = p; l < plane; ++l) {
          for (int64_t c = 0; c < nc; ++c) oc[c * plane + l] = o[l * kC + c];
        }
        break;
      }
      const __mmask16 lanes = First(plane - p);
      __m512 r[16];
      for (int64_t l = 0; l < 16; ++l) {
        r[l] = p + l < plane ? _mm512_load_ps(o + (p + l) * kC) : _mm512_setzero_ps();
      }
      Transpose16(r);
      for (int64_t c = 0; c < nc; ++c) _mm512_mask_storeu_ps(oc + c * plane + p, lanes, r[c]);
    }
    if (epilogue.empty() || relu_only) return;
    if (batch_epilogue) {  // position-free steps: one call over the block's planes
      epilogue.Apply(n, c0, 0, nc * plane, oc);
    } else {
      for (int64_t c = 0; c < nc; ++c) epilogue.Apply(n, c0 + c, 0, plane, oc + c * plane);
    }
  }
};

// 64-byte aligned float storage reused by one thread across blocks and calls.
struct AlignedBuf {
  std::vector<float> v;
  float* Get(int64_t n) {
    v.resize(static_cast<size_t>(n + 16));
    const uintptr_t at = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((64 - at % 64) % 64) / sizeof(float);
  }
};

}  // namespace

bool DepthwiseBlocked(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                      const Epilogue& epilogue, int threads, float* out) {
  const ConvAttrs& a = g.a;
  const int64_t taps = g.kh * g.kw;
  if (g.m != g.c || taps > kMaxTaps || g.p() <= 0) return false;
  const int64_t hp = (g.oh - 1) * a.stride_h + (g.kh - 1) * a.dilation_h + 1;
  const int64_t wp = (g.ow - 1) * a.stride_w + (g.kw - 1) * a.dilation_w + 1;
  // Normal layers pad by a pixel or two; hostile pads, strides or dilations take the plane loops.
  if (hp * wp > 4 * g.h * g.w + 4096 || g.p() > 4 * g.h * g.w + 4096) return false;
  const auto& ops = epilogue.ops();
  const bool relu_only =
      ops.size() == 1 && ops[0].kind == EpilogueKind::kActivation && ops[0].act.op == Op::Relu;
  const Blocked run{g, hp, wp, x, w, bias, epilogue, PositionFree(epilogue), relu_only, out};
  const int64_t blocks = (g.c + kC - 1) / kC;
  ParallelFor(threads, g.n * blocks, [&](int64_t t) {
    thread_local AlignedBuf buf_store, o_store;
    // The border stays zero from block to block and call to call (every block overwrites the
    // same interior): zero the buffer only when the layout changes.
    thread_local std::array<int64_t, 6> layout{};
    const std::array<int64_t, 6> now{hp, wp, a.pad_top, a.pad_left, g.h, g.w};
    float* buf = buf_store.Get(hp * wp * kC);
    if (layout != now) std::fill(buf, buf + hp * wp * kC, 0.0f), layout = now;
    float* o = o_store.Get(g.p() * kC);
    const int64_t c0 = t % blocks * kC;
    run.Run(t / blocks, c0, std::min(kC, g.c - c0), buf, o);
    if (buf_store.v.capacity() > (size_t{1} << 22)) buf_store.v = {}, layout = {};
    if (o_store.v.capacity() > (size_t{1} << 22)) o_store.v = {};
  });
  return true;
}

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
