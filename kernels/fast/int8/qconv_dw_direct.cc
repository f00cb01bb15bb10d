// The tap-group depthwise kernel's direct path (AVX-512 copy, VNNI + VBMI CPUs; qdw_taps.h):
// stride 1, dilation_w 1, outputs straight into the NCHW planes, a task's channels in one call.
#include <immintrin.h>

#include <cstdint>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qdw_taps.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
namespace dwt {
namespace {

using dwq::Epi;
using dwq::PackedBytes;

// The interleaved stride-1 path with outputs straight into the NCHW plane (y, or y32 where
// vpcompressd packs each 16 positions' outputs likewise): the valid bytes of each block (grid
// columns < ow) moved together by one vpermb, stored at the block's first output; the whole
// 64-byte store's overrun is the next block's to write, and the last blocks, whose store would
// pass the plane, store under a mask. No grid, no row copies. One output channel: its words
// (wr: broadcast, for a fixed kernel size), offset and epilogue e (fits: dwq::FitsInt32).
template <int KH, int NG>
FUSEFUZZ_Q8_VBMI_TARGET inline void DirectBlocks(const Geo& g, const uint8_t* plane, __m512i idx,
                                                 const int32_t* words, const V* wr, V offset,
                                                 const Epi& e, bool fits, const V* shift,
                                                 uint8_t* y, int32_t* y32) {
  constexpr bool kCarried = KH * NG > 0;
  V a[kCarried ? KH : 1];
  if constexpr (kCarried) {
    for (int ky = 0; ky < KH; ++ky) a[ky] = _mm512_loadu_si512(plane + ky * g.dh * g.wp);
  }
  for (int64_t blk = 0; blk < g.nblk; ++blk) {
    const int64_t q = blk * kVec * 16;
    V acc[kVec];
    if constexpr (kCarried) {
      AccumulateCarried<KH, NG>(plane + q, g.dh * g.wp, shift, wr, offset, a, acc);
    } else {
      Accumulate<KH, NG, kVec, false>(g, plane + q, 1, idx, wr, words, offset, acc);
    }
    if (y32) {  // y_int32: per 16 positions, the outputs packed by vpcompressd, as the bytes
      V v[4];
      OrderedInt32(acc, v);
      const uint64_t valid = g.valid[blk];
      int64_t at = g.first[blk];
      for (int s = 0; s < 4; ++s) {
        const __mmask16 k = static_cast<__mmask16>(valid >> (16 * s));
        const V c = _mm512_maskz_compress_epi32(k, v[s]);
        if (at + 16 <= g.opix) {
          Store(y32 + at, c);
        } else if (at < g.opix) {
          _mm512_mask_storeu_epi32(y32 + at, static_cast<__mmask16>((1u << (g.opix - at)) - 1), c);
        }
        at += __builtin_popcount(k);
      }
      continue;
    }
    // No residual here (it is read on the grid): the packs straight to the gather.
    const V bytes = _mm512_permutexvar_epi8(Load(g.gather + blk * 64),
                                            fits ? PackedBytes<false>(e, acc, nullptr, g.y_signed)
                                                 : PackedBytes(e, acc, nullptr, g.y_signed));
    const int64_t at = g.first[blk];
    if (at + 64 <= g.opix) {
      Store(y + at, bytes);
    } else if (at < g.opix) {
      const int64_t n = g.opix - at;
      _mm512_mask_storeu_epi8(y + at, (__mmask64{1} << n) - 1, bytes);
    }
  }
}

// Channels [c0, c1) of image b on the direct path in one call: the per-call values (the
// epilogue's broadcasts, the window shifts) set once per task, not per channel (on 14x14 planes,
// 4 blocks each, the per-channel setup took a quarter of the time). Planes are copied one channel
// ahead into the other of two slots, as in RunDepthwiseVbmi's task loop.
template <int KH, int NG>
FUSEFUZZ_Q8_VBMI_TARGET void DirectChannels(const Geo& geo, const Direct& direct, __m512i idx,
                                            uint8_t* planes, int64_t b, int64_t c0, int64_t c1) {
  // Local copies: the byte stores could alias the caller's structs, which would be reloaded.
  const Geo g = geo;
  const Direct d = direct;
  Epi e = d.e;
  constexpr int kShifts = 4 * (NG > 0 ? NG : 1);
  V shift[kShifts];
  // Window s: bytes s .. s + 63 of the row's two loads (vpermt2b indices s + i).
  alignas(64) uint8_t ramp[64];
  for (int i = 0; i < 64; ++i) ramp[i] = static_cast<uint8_t>(i);
  for (int s = 0; s < kShifts; ++s) {
    shift[s] = _mm512_add_epi8(_mm512_load_si512(ramp), _mm512_set1_epi8(static_cast<char>(s)));
  }
  // Plane ci's slot and input (the copies are direct calls: a lambda has no VBMI target to
  // inline PlaneInto into).
  auto slot = [&](int64_t ci) { return planes + static_cast<size_t>(ci - c0) % 2 * d.plane_bytes; };
  auto input = [&](int64_t ci) { return d.x + (b * d.c + ci) * d.hw; };
  dwv::PlaneInto(d.in, slot(c0), input(c0));
  for (int64_t ci = c0; ci < c1; ++ci) {
    if (ci + 1 < c1) dwv::PlaneInto(d.in, slot(ci + 1), input(ci + 1));
    const uint8_t* plane = slot(ci);
    for (int64_t j = 0; j < d.mg; ++j) {
      const int64_t oc = ci * d.mg + j, ybase = (b * d.m + oc) * g.opix;
      const int32_t* words = d.words + oc * g.kh * g.ng;
      V wr[KH * NG > 0 ? KH * NG : 1];
      if constexpr (KH * NG > 0) {
#pragma GCC unroll 14
        for (int t = 0; t < KH * NG; ++t) wr[t] = Set1(words[t]);
      }
      bool fits = false;
      if (d.multiplier) {
        e.multiplier = SetF(d.multiplier[oc]);
        fits = dwq::FitsInt32(d.accmax[oc], d.multiplier[oc]);
      }
      DirectBlocks<KH, NG>(g, plane, idx, words, wr, Set1(d.offset[oc]), e, fits, shift,
                           d.y ? d.y + ybase : nullptr, d.y32 ? d.y32 + ybase : nullptr);
    }
  }
}

}  // namespace

DirectFn PickDirect(int64_t kh, int64_t ng) {
  if (kh == 3 && ng == 1) return &DirectChannels<3, 1>;
  if (kh == 5 && ng == 2) return &DirectChannels<5, 2>;
  return &DirectChannels<0, 0>;
}

}  // namespace dwt
#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
