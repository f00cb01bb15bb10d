// Integer depthwise convolution, channel-blocked (AVX-512 copy only; docs/kernels.md "Int8"):
// 16 input channels at a time are transposed (four 16x16 byte transposes at once in zmm
// registers, 64 pixels per step) into one zero-point-bordered plane of pixels, each pixel the 16
// channels' bytes, so one vector holds one pixel of 16 channels and a tap is one widening load
// (vpmovzxbd/vpmovsxbd) times the 16 channels' weights of that tap (low int16 of each lane, high
// 0: pmaddwd, or vpdpwssd with VNNI), exact, with offset = bias - zx * sum(w) undoing the raw
// inputs. On VNNI + VBMI CPUs with kw <= 4 a kernel row is instead one tap group: one load of 4
// pixels, one vpermb (4 x 16 byte transpose), one vpdpbusd (RowTaps). Nothing is done per plane: no
// compaction, no wasted lanes on 7x7 planes, and the requantization (per-channel offset and
// multiplier as vectors, the lanes being channels) runs in registers into a staging plane that the
// same transpose writes back to the NCHW output planes. Every buffer is the thread's own, allocated
// once (thread_local).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qdw_buffers.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
#define FUSEFUZZ_Q8_DWC_VBMI_TARGET __attribute__((target("avx512vnni,avx512vbmi")))
namespace {

using int8::QConvProblem;
using int8::QStorage;

constexpr int64_t kCb = 16;  // channels per block: one byte lane of an xmm, one int32 lane here
constexpr int kPx = 4;       // output pixels per step: independent accumulator chains

// Four independent 16x16 byte transposes, one per 128-bit lane: in[r] lane L byte c -> out[c]
// lane L byte r (the unpacks work within lanes).
inline void Transpose16x4(const __m512i in[16], __m512i out[16]) {
  __m512i a[16], b[16], c[16];
  for (int k = 0; k < 8; ++k) {
    a[k] = _mm512_unpacklo_epi8(in[2 * k], in[2 * k + 1]);
    a[k + 8] = _mm512_unpackhi_epi8(in[2 * k], in[2 * k + 1]);
  }
  for (int k = 0; k < 8; ++k) {
    b[k] = _mm512_unpacklo_epi16(a[2 * k], a[2 * k + 1]);
    b[k + 8] = _mm512_unpackhi_epi16(a[2 * k], a[2 * k + 1]);
  }
  for (int k = 0; k < 8; ++k) {
    c[k] = _mm512_unpacklo_epi32(b[2 * k], b[2 * k + 1]);
    c[k + 8] = _mm512_unpackhi_epi32(b[2 * k], b[2 * k + 1]);
  }
  // After three stages c[2k], c[2k+1] hold columns (col, col + 1) of rows 0-7 and 8-15.
  constexpr int kCol[8] = {0, 8, 4, 12, 2, 10, 6, 14};
  for (int k = 0; k < 8; ++k) {
    out[kCol[k]] = _mm512_unpacklo_epi64(c[2 * k], c[2 * k + 1]);
    out[kCol[k] + 1] = _mm512_unpackhi_epi64(c[2 * k], c[2 * k + 1]);
  }
}

inline __mmask64 FirstBytes(int64_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

// The 16 channel planes src[l] (count bytes each, NCHW) to pixels: pixel i's 16 channel bytes
// stored at dst + at(i), or nowhere where at(i) < 0. 64 pixels per step.
template <typename At>
inline void ChannelsToPixels(const uint8_t* const src[16], int64_t count, uint8_t* dst, At at,
                             __m512i flip = _mm512_setzero_si512()) {
  for (int64_t i0 = 0; i0 < count; i0 += 64) {
    const int64_t n = std::min<int64_t>(64, count - i0);
    const __mmask64 k = FirstBytes(n);
    __m512i in[16], out[16];
    for (int l = 0; l < 16; ++l) {
      in[l] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, src[l] + i0), flip);
    }
    Transpose16x4(in, out);
    // out[c] lane L: pixel i0 + 16 L + c.
    for (int c = 0; c < 16; ++c) {
      const __m128i lane[4] = {_mm512_castsi512_si128(out[c]), _mm512_extracti32x4_epi32(out[c], 1),
                               _mm512_extracti32x4_epi32(out[c], 2),
                               _mm512_extracti32x4_epi32(out[c], 3)};
      for (int L = 0; L < 4; ++L) {
        const int64_t i = i0 + 16 * L + c;
        if (i >= count) continue;
        const int64_t d = at(i);
        if (d >= 0) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + d), lane[L]);
      }
    }
  }
}

// Where Finish stores output pixel i in the staging plane (in pixels): within each 64, pixel
// 16 L + r at 4 r + L, so that one 64-byte load holds pixels r, 16 + r, 32 + r, 48 + r in its
// four lanes, the layout Transpose16x4 turns into 64 consecutive pixels per channel.
inline int64_t StagedAt(int64_t i) { return (i & ~int64_t{63}) + (i & 15) * 4 + ((i >> 4) & 3); }

// The staging plane (count pixels, StagedAt order) to the first nc channel planes dst[l].
inline void PixelsToChannels(const uint8_t* src, int64_t count, uint8_t* const dst[16],
                             int64_t nc) {
  for (int64_t i0 = 0; i0 < count; i0 += 64) {
    __m512i in[16], out[16];
    // Whole 64-pixel groups are allocated: the lanes past count are read, never stored.
    for (int r = 0; r < 16; ++r) in[r] = _mm512_loadu_si512(src + (i0 + 4 * r) * 16);
    Transpose16x4(in, out);
    const __mmask64 k = FirstBytes(count - i0);
    for (int64_t l = 0; l < nc; ++l) _mm512_mask_storeu_epi8(dst[l] + i0, k, out[l]);
  }
}

// The int32 staging plane (y_int32; count pixels, 16 channels each in pixel order) to the
// first nc channel planes dst[l]: a 16x16 int32 transpose per 16 pixels.
inline void Int32PixelsToChannels(const int32_t* src, int64_t count, int32_t* const dst[16],
                                  int64_t nc) {
  for (int64_t i0 = 0; i0 < count; i0 += 16) {
    __m512i r[16], t[16], u[16];
    for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_si512(src + (i0 + k) * 16);
    for (int k = 0; k < 8; ++k) {
      t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
    // u[4k + j] lane L: column 4L + j of rows 4k .. 4k + 3.
    for (int k = 0; k < 4; ++k) {
      u[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
      u[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
      u[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
      u[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
    const __mmask16 k =
        static_cast<__mmask16>(count - i0 >= 16 ? 0xFFFFu : (1u << (count - i0)) - 1);
    for (int j = 0; j < 4; ++j) {
      const __m512i v0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88);
      const __m512i v1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xDD);
      const __m512i w0 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x88);
      const __m512i w1 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xDD);
      const __m512i col[4] = {
          _mm512_shuffle_i32x4(v0, w0, 0x88), _mm512_shuffle_i32x4(v1, w1, 0x88),
          _mm512_shuffle_i32x4(v0, w0, 0xDD), _mm512_shuffle_i32x4(v1, w1, 0xDD)};
      for (int L = 0; L < 4; ++L) {
        if (4 * L + j < nc) _mm512_mask_storeu_epi32(dst[4 * L + j] + i0, k, col[L]);
      }
    }
  }
}

// One channel block's requantization: the lanes are the 16 channels.
struct Epi {
  V offset;
  F multiplier, lo, hi, residual_multiplier;
  V y_zero_point, residual_zero_point;
  bool residual_signed = false;
  const uint8_t* residual = nullptr;  // pixel-major staging, or null
  uint8_t* y = nullptr;               // pixel-major staging
  int32_t* y32 = nullptr;             // pixel-major int32 (y_int32), or null
};

// The same operations, in the same order, as RequantStore (qsimd.h).
inline void Finish(const Epi& e, V acc, int64_t pix) {
  acc = Add(acc, e.offset);
  if (e.y32) return Store(e.y32 + pix * kCb, acc);
  F v = Mul(ToFloat(acc), e.multiplier);
  if (e.residual) {
    const V d = Sub(Load8(e.residual + pix * kCb, e.residual_signed), e.residual_zero_point);
    v = AddF(v, Mul(ToFloat(d), e.residual_multiplier));
  }
  const V q = Add(Round(MinF(MaxF(v, e.lo), e.hi)), e.y_zero_point);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(e.y + StagedAt(pix) * kCb), _mm512_cvtepi32_epi8(q));
}

struct Geo {
  const uint8_t* plane;  // [hp][wp][16]
  int64_t wp, ow, sh, sw, dh, dw, kh, kw;
};

// Output row oy of one channel block. UNIT (stride 1, dilation 1, KW known): each input pixel
// is widened once per kernel row and reused by the KW taps that read it. KH = KW = 0: run-time
// kernel size, one load per tap.
// NP output pixels from ox, NP accumulator chains.
#define FUSEFUZZ_Q8_DWC_BLOCK(MAC, NP)                                                     \
  {                                                                                        \
    V acc[NP];                                                                             \
    _Pragma("GCC unroll 4") for (int i = 0; i < NP; ++i) acc[i] = Zero();                  \
    for (int64_t ky = 0; ky < kh; ++ky) {                                                  \
      const uint8_t* row = top + ky * g.dh * rs;                                           \
      if constexpr (UNIT && KW > 0) {                                                      \
        const uint8_t* s = row + ox * kCb;                                                 \
        V xv[NP + KW - 1];                                                                 \
        _Pragma("GCC unroll 8") for (int i = 0; i < NP + KW - 1; ++i) xv[i] =              \
            Load8(s + i * kCb, SIGNED);                                                    \
        _Pragma("GCC unroll 7") for (int kx = 0; kx < KW; ++kx) {                          \
          const V wv = w(ky * KW + kx);                                                    \
          _Pragma("GCC unroll 4") for (int i = 0; i < NP; ++i) acc[i] =                    \
              MAC(acc[i], xv[i + kx], wv);                                                 \
        }                                                                                  \
      } else {                                                                             \
        for (int64_t kx = 0; kx < kw; ++kx) {                                              \
          const V wv = w(ky * kw + kx);                                                    \
          const uint8_t* s = row + (ox * g.sw + kx * g.dw) * kCb;                          \
          _Pragma("GCC unroll 4") for (int i = 0; i < NP; ++i) acc[i] =                    \
              MAC(acc[i], Load8(s + i * g.sw * kCb, SIGNED), wv);                          \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
    _Pragma("GCC unroll 4") for (int i = 0; i < NP; ++i) Finish(e, acc[i], pix0 + ox + i); \
  }

// Output row oy of one channel block. UNIT (stride 1, dilation 1, KW known): each input pixel
// is widened once per kernel row and reused by the KW taps that read it. KH = KW = 0: run-time
// kernel size, one load per tap.
#define FUSEFUZZ_Q8_DWC_ROW(MAC)                                                           \
  const int64_t kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;                                  \
  V wr[KH * KW > 0 ? KH * KW : 1];                                                         \
  if constexpr (KH * KW > 0) {                                                             \
    _Pragma("GCC unroll 25") for (int t = 0; t < KH * KW; ++t) wr[t] = Load(wt + t * kCb); \
  }                                                                                        \
  auto w = [&](int64_t t) { return KH * KW > 0 ? wr[t] : Load(wt + t * kCb); };            \
  const int64_t rs = g.wp * kCb;                                                           \
  const uint8_t* top = g.plane + oy * g.sh * rs;                                           \
  const int64_t pix0 = oy * g.ow;                                                          \
  int64_t ox = 0;                                                                          \
  for (; ox + kPx <= g.ow; ox += kPx) FUSEFUZZ_Q8_DWC_BLOCK(MAC, kPx)                      \
  switch (g.ow - ox) {                                                                     \
    case 3:                                                                                \
      FUSEFUZZ_Q8_DWC_BLOCK(MAC, 3)                                                        \
      break;                                                                               \
    case 2:                                                                                \
      FUSEFUZZ_Q8_DWC_BLOCK(MAC, 2)                                                        \
      break;                                                                               \
    case 1:                                                                                \
      FUSEFUZZ_Q8_DWC_BLOCK(MAC, 1)                                                        \
      break;                                                                               \
    default:                                                                               \
      break;                                                                               \
  }

template <int KH, int KW, bool UNIT, bool SIGNED>
void RowMadd(const Geo& g, const int32_t* wt, const Epi& e, int64_t oy) {
  FUSEFUZZ_Q8_DWC_ROW(MAdd)
}
template <int KH, int KW, bool UNIT, bool SIGNED>
FUSEFUZZ_Q8_VNNI_TARGET void RowVnni(const Geo& g, const int32_t* wt, const Epi& e, int64_t oy) {
  FUSEFUZZ_Q8_DWC_ROW(Dpwssd)
}
#undef FUSEFUZZ_Q8_DWC_ROW
#undef FUSEFUZZ_Q8_DWC_BLOCK

// Output row oy by tap groups (VNNI + VBMI CPUs, kernel rows of at most 4 taps, dilation_w 1:
// the taps of an output are consecutive pixels at any stride): per kernel row, one 64-byte
// load at the output's first tap pixel holds 4 pixels x 16 channels, one vpermb (a 4 x 16 byte
// transpose) gives each channel's lane its 4 taps' bytes, and one vpdpbusd multiplies them by
// that kernel row's 4 weights (wt: [kh][16] words, 0 past kw): kh instructions per 16 outputs,
// where RowVnni needs kh * kw. The plane holds u8 (int8 inputs + 128); the 4th pixel's weight
// is 0 for 3-wide kernels. KH = 0: run-time kernel height.
// NP outputs from ox of RowTaps' row.
template <int KH, int NP>
FUSEFUZZ_Q8_DWC_VBMI_TARGET inline void TapBlock(const Geo& g, const V* wr, const int32_t* wt,
                                                 const Epi& e, const uint8_t* top, int64_t ox,
                                                 int64_t pix0, __m512i idx) {
  const int64_t kh = KH ? KH : g.kh, rs = g.wp * kCb, ps = g.sw * kCb;
  V acc[NP];
  for (int i = 0; i < NP; ++i) acc[i] = Zero();
  for (int64_t ky = 0; ky < kh; ++ky) {
    const V w = KH > 0 ? wr[ky] : Load(wt + ky * kCb);
    const uint8_t* s = top + ky * g.dh * rs + ox * ps;
    for (int i = 0; i < NP; ++i) {
      acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_permutexvar_epi8(idx, Load(s + i * ps)), w);
    }
  }
  for (int i = 0; i < NP; ++i) Finish(e, acc[i], pix0 + ox + i);
}

template <int KH>
FUSEFUZZ_Q8_DWC_VBMI_TARGET void RowTaps(const Geo& g, const int32_t* wt, const Epi& e,
                                         int64_t oy) {
  // Byte 4 c + k of the result: byte 16 k + c of the load (pixel k, channel c).
  alignas(64) static constexpr uint8_t kIdx[64] = {
      0,  16, 32, 48, 1,  17, 33, 49, 2,  18, 34, 50, 3,  19, 35, 51,  //
      4,  20, 36, 52, 5,  21, 37, 53, 6,  22, 38, 54, 7,  23, 39, 55,  //
      8,  24, 40, 56, 9,  25, 41, 57, 10, 26, 42, 58, 11, 27, 43, 59,  //
      12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62, 15, 31, 47, 63};
  const __m512i idx = _mm512_load_si512(kIdx);
  V wr[KH > 0 ? KH : 1];
  if constexpr (KH > 0) {
    for (int t = 0; t < KH; ++t) wr[t] = Load(wt + t * kCb);
  }
  const uint8_t* top = g.plane + oy * g.sh * g.wp * kCb;
  const int64_t pix0 = oy * g.ow;
  int64_t ox = 0;
  for (; ox + kPx <= g.ow; ox += kPx) TapBlock<KH, kPx>(g, wr, wt, e, top, ox, pix0, idx);
  switch (g.ow - ox) {
    case 3:
      return TapBlock<KH, 3>(g, wr, wt, e, top, ox, pix0, idx);
    case 2:
      return TapBlock<KH, 2>(g, wr, wt, e, top, ox, pix0, idx);
    case 1:
      return TapBlock<KH, 1>(g, wr, wt, e, top, ox, pix0, idx);
    default:
      return;
  }
}

using RowFn = void (*)(const Geo&, const int32_t*, const Epi&, int64_t);

template <int KH, int KW, bool UNIT>
RowFn RowOf(bool vnni, bool is_signed) {
  if (vnni) return is_signed ? &RowVnni<KH, KW, UNIT, true> : &RowVnni<KH, KW, UNIT, false>;
  return is_signed ? &RowMadd<KH, KW, UNIT, true> : &RowMadd<KH, KW, UNIT, false>;
}

RowFn PickRow(const QConvProblem& p, bool vnni, bool taps) {
  if (taps) return p.kh == 3 ? &RowTaps<3> : &RowTaps<0>;
  const bool is_signed = p.x_type == QStorage::kInt8;
  const bool unit = p.stride_w == 1 && p.dilation_w == 1;
  if (p.kh == 3 && p.kw == 3) {
    return unit ? RowOf<3, 3, true>(vnni, is_signed) : RowOf<3, 3, false>(vnni, is_signed);
  }
  if (p.kh == 5 && p.kw == 5) {
    return unit ? RowOf<5, 5, true>(vnni, is_signed) : RowOf<5, 5, false>(vnni, is_signed);
  }
  return RowOf<0, 0, false>(vnni, is_signed);
}

// The thread's buffers (qdw_buffers.h), shared with the tap-group kernel: the two never run
// nested (qconv_depthwise.cc picks one per call).
using dwv::Buffers;
using dwv::ThreadBuffers;

}  // namespace

bool RunDepthwiseChannels(const QPacked& pk, const QConvProblem& p, int threads) {
  if (pk.wc.empty()) return false;  // Pack left this copy's blocked weights out
  // The tap-group rows where Pack made their words (VNNI + VBMI, kw <= 4) and taps are
  // consecutive pixels.
  const bool tap_rows = !pk.wct.empty() && p.dilation_w == 1;
  const bool is_signed = p.x_type == QStorage::kInt8;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(tap_rows && is_signed ? 0x80 : 0));
  const int64_t mg = p.m / p.group, taps = p.kh * p.kw, opix = p.oh * p.ow;
  const int64_t hp = (p.oh - 1) * p.stride_h + (p.kh - 1) * p.dilation_h + 1;
  const int64_t wp = (p.ow - 1) * p.stride_w + (p.kw - 1) * p.dilation_w + 1;
  const int64_t blocks = (p.c + kCb - 1) / kCb;
  // The input columns a padded row holds: [q0, q1) of the wp, from input column q - pad_left.
  const int64_t q0 = std::clamp<int64_t>(p.pad_left, 0, wp);
  const int64_t q1 = std::clamp<int64_t>(p.pad_left + p.w, q0, wp);
  const uint8_t pad =
      static_cast<uint8_t>((p.x_zero_point & 0xFF) ^ (tap_rows && is_signed ? 0x80 : 0));
  const RowFn row = PickRow(p, pk.vnni, tap_rows);
  // Where input pixel (iy, ix) lands in the bordered plane (bytes), -1 if no output reads it.
  std::vector<int64_t> at(static_cast<size_t>(p.h * p.w), -1);
  for (int64_t iy = 0; iy < p.h; ++iy) {
    const int64_t yy = iy + p.pad_top;
    if (yy < 0 || yy >= hp) continue;
    for (int64_t q = q0; q < q1; ++q) {
      at[static_cast<size_t>(iy * p.w + q - p.pad_left)] = (yy * wp + q) * kCb;
    }
  }
  ParallelFor(threads, p.n * blocks, [&](int64_t task) {
    const int64_t b = task / blocks, c0 = (task % blocks) * kCb;
    const int64_t nc = std::min(kCb, p.c - c0);
    Buffers& buf = ThreadBuffers();
    // + 64: a tap-group load reads up to 3 pixels past the row's last tap.
    uint8_t* plane = Grow(buf.plane, static_cast<size_t>(hp * wp * kCb + 64));
    // The transposed input; lanes past nc read channel c0 (their weights are 0, outputs dropped).
    const uint8_t* src[16];
    for (int64_t l = 0; l < kCb; ++l) src[l] = p.x + (b * p.c + c0 + (l < nc ? l : 0)) * p.h * p.w;
    const int64_t rs = wp * kCb;
    for (int64_t yy = 0; yy < hp; ++yy) {  // the border: what no input pixel lands on
      const int64_t iy = yy - p.pad_top;
      uint8_t* prow = plane + yy * rs;
      if (iy < 0 || iy >= p.h) {
        std::memset(prow, pad, static_cast<size_t>(rs));
        continue;
      }
      std::memset(prow, pad, static_cast<size_t>(q0 * kCb));
      std::memset(prow + q1 * kCb, pad, static_cast<size_t>((wp - q1) * kCb));
    }
    ChannelsToPixels(
        src, p.h * p.w, plane, [&](int64_t i) { return at[static_cast<size_t>(i)]; }, flip);
    Geo g{plane, wp, p.ow, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.kh, p.kw};
    const size_t stage = static_cast<size_t>((opix + 63) / 64 * 64 * kCb);  // whole 64s
    for (int64_t j = 0; j < mg; ++j) {
      // Output channel of lane l: (c0 + l) * mg + j; its plane at y + (b*m + oc) * opix.
      const int64_t cb = c0 / kCb;
      const int32_t* w = tap_rows ? pk.wct.data() + ((j * blocks + cb) * p.kh) * kCb
                                  : pk.wc.data() + ((j * blocks + cb) * taps) * kCb;
      alignas(64) float mult[16] = {};
      for (int64_t l = 0; l < nc; ++l) {
        mult[l] = p.y_int32 ? 1.0f : p.multiplier[(c0 + l) * mg + j];
      }
      Epi e;
      e.offset = Load((tap_rows ? pk.offct : pk.offc).data() + (j * blocks + cb) * kCb);
      e.multiplier = _mm512_load_ps(mult);
      e.lo = SetF(static_cast<float>(p.y_min - p.y_zero_point));
      e.hi = SetF(static_cast<float>(p.y_max - p.y_zero_point));
      e.y_zero_point = Set1(p.y_zero_point);
      e.residual_zero_point = Set1(p.residual_zero_point);
      e.residual_multiplier = SetF(p.residual_multiplier);
      e.residual_signed = p.residual_type == QStorage::kInt8;
      uint8_t* dst[16];
      for (int64_t l = 0; l < kCb; ++l) {
        dst[l] = p.y ? p.y + (b * p.m + (c0 + (l < nc ? l : 0)) * mg + j) * opix : nullptr;
      }
      if (p.y_int32) {
        e.y32 = Grow(buf.y32, stage);
      } else {
        e.y = Grow(buf.y, stage);
        if (p.residual) {
          uint8_t* rst = Grow(buf.residual, stage);
          const uint8_t* rsrc[16];
          for (int l = 0; l < 16; ++l) rsrc[l] = p.residual + (dst[l] - p.y);
          ChannelsToPixels(rsrc, opix, rst, [](int64_t i) { return i * kCb; });
          e.residual = rst;
        }
      }
      for (int64_t oy = 0; oy < p.oh; ++oy) row(g, w, e, oy);
      if (p.y_int32) {
        int32_t* dst32[16];
        for (int64_t l = 0; l < kCb; ++l) {
          dst32[l] = p.y_int32 + (b * p.m + (c0 + (l < nc ? l : 0)) * mg + j) * opix;
        }
        Int32PixelsToChannels(e.y32, opix, dst32, nc);
        continue;
      }
      PixelsToChannels(e.y, opix, dst, nc);
    }
  });
  return true;
}

#else  // the SSE2 and AVX2 copies keep the plane kernel (qconv_depthwise.cc)

bool RunDepthwiseChannels(const QPacked&, const int8::QConvProblem&, int) { return false; }

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
