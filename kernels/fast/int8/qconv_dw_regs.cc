// Integer depthwise convolution of planes that fit one register (AVX-512 copy, VNNI + VBMI
// CPUs; docs/kernels.md "Int8"): input planes of at most 63 bytes, output planes of at most
// 64, kernel rows of at most 4 taps (MobileNetV2's 7x7 rows; any stride, dilation and pads).
// An input plane is one masked 64-byte load, int8 flipped to u8 (x ^ 0x80), its bytes past the
// plane the zero point. Output o of the plane is lane 4 L + j of vector r, o = 16 L + 4 r + j,
// and for each (vector, kernel row) one vpermb by a table built once per call gathers every
// lane's 4 tap bytes (padding taps and taps past kw read a zero-point byte past the plane), then
// one vpdpbusd multiplies them by the row's 4 weights (QPacked::wv, exact, from offv = bias -
// zu * sum(w)). The saturating packs of the four requantized vectors then leave the 64 output
// bytes in plane order (qdw_requant.h): one store per plane. Nothing is copied or transposed,
// no buffer is used: where the channel-blocked kernel (qconv_dw_channels.cc) moved each plane
// through two transposes and a bordered buffer, this one touches the input and output once.
#include <algorithm>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qdw_requant.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
namespace {

using dwq::Epi;
using dwq::PackedBytes;
using dwq::ResidualTerms;
using int8::QConvProblem;
using int8::QStorage;

#define FUSEFUZZ_Q8_REGS_TARGET __attribute__((target("avx512vnni,avx512vbmi")))

constexpr int64_t kMaxKh = 7;  // tables [kh][4][64] on the stack
constexpr uint8_t kPadByte = 63;

struct Geo {
  int64_t kh = 3, ohw = 0, ihw = 0, mg = 1;
  bool y_signed = false, residual_signed = false;
  __mmask64 in_mask = 0, out_mask = 0;
};

// The (kernel row, vector) tables: byte 4 l + k of table [ky][r] is where in the input plane
// lane l's tap (ky, k) is, or kPadByte (a padding tap, k >= kw, or no output there).
void BuildTables(const QConvProblem& p, uint8_t tab[][4][64]) {
  const int64_t ohw = p.oh * p.ow;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    for (int r = 0; r < 4; ++r) {
      for (int l = 0; l < 16; ++l) {
        const int64_t o = 16 * (l / 4) + 4 * r + l % 4;
        for (int k = 0; k < 4; ++k) {
          uint8_t at = kPadByte;
          if (o < ohw && k < p.kw) {
            const int64_t iy = o / p.ow * p.stride_h + ky * p.dilation_h - p.pad_top;
            const int64_t ix = o % p.ow * p.stride_w + k * p.dilation_w - p.pad_left;
            if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w) {
              at = static_cast<uint8_t>(iy * p.w + ix);
            }
          }
          tab[ky][r][4 * l + k] = at;
        }
      }
    }
  }
}

// Output planes [oc0, oc1) of image b. KH: the kernel height (0: g.kh at run time). A plane's
// 64-byte store reaches into the next planes, which this call writes after it: only a store
// that would pass y_end (the last planes of the call) is masked.
template <int KH>
FUSEFUZZ_Q8_REGS_TARGET void Planes(const Geo& geo, const QPacked& pk, const QConvProblem& p,
                                    const uint8_t (*tab)[4][64], int64_t b, int64_t oc0,
                                    int64_t oc1, const Epi& epi) {
  const Geo g = geo;  // values: the byte stores could alias the structs
  Epi e = epi;
  const int64_t kh = KH ? KH : g.kh;
  V t[KH ? KH : kMaxKh][4];
  for (int64_t ky = 0; ky < kh; ++ky) {
    for (int r = 0; r < 4; ++r) t[ky][r] = _mm512_loadu_si512(tab[ky][r]);
  }
  const V pad = _mm512_set1_epi8(static_cast<char>(p.x_zero_point & 0xFF));
  const V flip = _mm512_set1_epi8(static_cast<char>(p.x_type == QStorage::kInt8 ? 0x80 : 0));
  const uint8_t* x = p.x + b * p.c * g.ihw;
  uint8_t* y_end = p.y_int32 ? nullptr : p.y + (b * p.m + oc1) * g.ohw;
  for (int64_t oc = oc0; oc < oc1; ++oc) {
    const int64_t ci = oc / g.mg, ybase = (b * p.m + oc) * g.ohw;
    // The plane's bytes, then the zero point (flipped with them).
    const V in = _mm512_xor_si512(_mm512_mask_loadu_epi8(pad, g.in_mask, x + ci * g.ihw), flip);
    const int32_t* words = pk.wv.data() + oc * kh;
    V acc[4];
    const V offset = Set1(pk.offv[static_cast<size_t>(oc)]);
    for (int r = 0; r < 4; ++r) acc[r] = offset;
    for (int64_t ky = 0; ky < kh; ++ky) {
      const V w = Set1(words[ky]);
      for (int r = 0; r < 4; ++r) {
        acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_permutexvar_epi8(t[ky][r], in), w);
      }
    }
    if (p.y_int32) {  // vector s: outputs 16 s .. 16 s + 15 = 128-bit lane s of acc[0..3]
      const V a = _mm512_shuffle_i32x4(acc[0], acc[1], 0x44);
      const V bb = _mm512_shuffle_i32x4(acc[2], acc[3], 0x44);
      const V c = _mm512_shuffle_i32x4(acc[0], acc[1], 0xEE);
      const V d = _mm512_shuffle_i32x4(acc[2], acc[3], 0xEE);
      const V v[4] = {_mm512_shuffle_i32x4(a, bb, 0x88), _mm512_shuffle_i32x4(a, bb, 0xDD),
                      _mm512_shuffle_i32x4(c, d, 0x88), _mm512_shuffle_i32x4(c, d, 0xDD)};
      for (int s = 0; s < 4; ++s) {
        const __mmask16 k = static_cast<__mmask16>(g.out_mask >> (16 * s));
        if (k) _mm512_mask_storeu_epi32(p.y_int32 + ybase + 16 * s, k, v[s]);
      }
      continue;
    }
    e.multiplier = SetF(p.multiplier[oc]);
    F rt[4];
    if (p.residual) {  // residual byte o = 16 L + 4 r + j to lane 4 L + j of 128-bit lane r
      alignas(64) static constexpr uint8_t kDeal[64] = {
          0,  1,  2,  3,  16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51,  //
          4,  5,  6,  7,  20, 21, 22, 23, 36, 37, 38, 39, 52, 53, 54, 55,  //
          8,  9,  10, 11, 24, 25, 26, 27, 40, 41, 42, 43, 56, 57, 58, 59,  //
          12, 13, 14, 15, 28, 29, 30, 31, 44, 45, 46, 47, 60, 61, 62, 63};
      const V res = _mm512_maskz_loadu_epi8(g.out_mask, p.residual + ybase);
      ResidualTerms(e, _mm512_permutexvar_epi8(_mm512_load_si512(kDeal), res), g.residual_signed,
                    rt);
    }
    const V bytes = PackedBytes(e, acc, p.residual ? rt : nullptr, g.y_signed);
    uint8_t* y = p.y + ybase;
    if (y + 64 <= y_end) {
      _mm512_storeu_si512(y, bytes);
    } else {
      _mm512_mask_storeu_epi8(y, g.out_mask, bytes);
    }
  }
}

bool Fits(const QPacked& pk, const QConvProblem& p) {
  return !pk.wv.empty() && pk.ng == 1 && p.h * p.w <= kPadByte && p.oh * p.ow <= 64 &&
         p.kh <= kMaxKh;
}

}  // namespace

bool RunDepthwiseRegs(const QPacked& pk, const QConvProblem& p, int threads) {
  if (!Fits(pk, p)) return false;
  Geo g;
  g.kh = p.kh, g.ohw = p.oh * p.ow, g.ihw = p.h * p.w, g.mg = p.m / p.group;
  g.y_signed = p.y_type == QStorage::kInt8;
  g.residual_signed = p.residual_type == QStorage::kInt8;
  g.in_mask = (__mmask64{1} << g.ihw) - 1;  // ihw <= 63
  g.out_mask = g.ohw == 64 ? ~__mmask64{0} : (__mmask64{1} << g.ohw) - 1;
  alignas(64) uint8_t tab[kMaxKh][4][64];
  BuildTables(p, tab);
  const float lo = static_cast<float>(p.y_min - p.y_zero_point);
  const float hi = static_cast<float>(p.y_max - p.y_zero_point);
  const Epi e = dwq::EpiOf(1.0f, lo, hi, p.residual_multiplier, p.y_zero_point,
                           p.residual_zero_point, p.y_min, p.y_max, g.y_signed);
  // Tasks of 64 output planes (a 7x7 plane is about 60 ns of work).
  constexpr int64_t kChunk = 64;
  const int64_t chunks = (p.m + kChunk - 1) / kChunk;
  const auto planes = p.kh == 3 ? &Planes<3> : &Planes<0>;
  ParallelFor(threads, p.n * chunks, [&](int64_t task) {
    const int64_t b = task / chunks, oc0 = task % chunks * kChunk;
    planes(g, pk, p, tab, b, oc0, std::min(p.m, oc0 + kChunk), e);
  });
  return true;
}

#else  // the SSE2 and AVX2 copies: no VBMI

bool RunDepthwiseRegs(const QPacked&, const int8::QConvProblem&, int) { return false; }

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
