// The tap-group depthwise kernels' shared parts (AVX-512 copy, VNNI + VBMI CPUs): the grid
// geometry, the tap-group accumulation, and the direct path's entry (qconv_dw_direct.cc),
// used by qconv_dw_vbmi.cc. docs/kernels.md, "Int8".
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/fast/int8/qdw_buffers.h"
#include "kernels/fast/int8/qdw_requant.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
#if defined(__AVX512BW__)
namespace dwt {

#define FUSEFUZZ_Q8_VBMI_TARGET __attribute__((target("avx512vnni,avx512vbmi")))

constexpr int kVec = 4;  // vectors per step: independent accumulator chains

struct Geo {
  int64_t wp = 0;  // the bordered plane's row stride (bytes)
  int64_t oh = 0, ow = 0, sh = 1, sw = 1, dh = 1, dw = 1, kh = 1, ng = 1;
  int64_t nblk = 0;  // flat: steps of kVec * 16 grid positions
  bool flat = false, y_signed = false;
  // The direct path: per block, where its k-th output is in the block's packed bytes (byte k;
  // dwv::TableFor) and the first one's index in the plane.
  const uint8_t* gather = nullptr;
  const uint64_t* valid = nullptr;  // bit i: grid position i of the block is an output
  const int64_t* first = nullptr;
  int64_t opix = 0;
};

// acc[r] = offset + the taps of the NV vectors at src + r * vstep. PERM: each load goes through
// vpermb (lane i, byte k: the byte sw * i + k * dw of the load); else the load's own dword i is
// lane i's window (stride 1, dilation 1, outputs interleaved: see Channel).
template <int KH, int NG, int NV, bool PERM>
FUSEFUZZ_Q8_VBMI_TARGET inline void Accumulate(const Geo& g, const uint8_t* src, int64_t vstep,
                                               __m512i idx, const V* wr, const int32_t* words,
                                               V offset, V acc[NV]) {
  const int64_t kh = KH ? KH : g.kh, ng = NG ? NG : g.ng;
  const int64_t rstep = g.dh * g.wp, gstep = 4 * g.dw;
#pragma GCC unroll 4
  for (int r = 0; r < NV; ++r) acc[r] = offset;
#pragma GCC unroll 7
  for (int64_t ky = 0; ky < kh; ++ky) {
#pragma GCC unroll 2
    for (int64_t gi = 0; gi < ng; ++gi) {
      const V w = KH * NG > 0 ? wr[ky * ng + gi] : Set1(words[ky * ng + gi]);
      const uint8_t* s = src + ky * rstep + gi * gstep;
#pragma GCC unroll 4
      for (int r = 0; r < NV; ++r) {
        V x = _mm512_loadu_si512(s + r * vstep);
        if constexpr (PERM) x = _mm512_permutexvar_epi8(idx, x);
        acc[r] = _mm512_dpbusd_epi32(acc[r], x, w);
      }
    }
  }
}

// Accumulate's interleaved stride-1 case with each row's loads carried across blocks: the 4 *
// NG windows a kernel row reads at q .. q + 4 NG - 1 are cut by vpermt2b from the 128 bytes at
// q (the previous block's second load) and q + 64, so a block loads one vector per kernel row,
// not 4 NG: 64-byte loads at byte offsets cross cache lines and took 2 load cycles each, the
// kernel's bound (fusion_bench dw_relu6_requant C192_H28). a[ky]: the row's bytes at q, on
// return its bytes at q + 64.
template <int KH, int NG>
FUSEFUZZ_Q8_VBMI_TARGET inline void AccumulateCarried(const uint8_t* src, int64_t rstep,
                                                      const V* shift, const V* wr, V offset,
                                                      V a[KH], V acc[kVec]) {
#pragma GCC unroll 4
  for (int r = 0; r < kVec; ++r) acc[r] = offset;
#pragma GCC unroll 7
  for (int ky = 0; ky < KH; ++ky) {
    const V b = _mm512_loadu_si512(src + ky * rstep + 64);
#pragma GCC unroll 2
    for (int gi = 0; gi < NG; ++gi) {
#pragma GCC unroll 4
      for (int r = 0; r < kVec; ++r) {
        const int s = 4 * gi + r;
        const V x = s == 0 ? a[ky] : _mm512_permutex2var_epi8(a[ky], shift[s], b);
        acc[r] = _mm512_dpbusd_epi32(acc[r], x, wr[ky * NG + gi]);
      }
    }
    a[ky] = b;
  }
}

// The int32 of an interleaved block in output order: v[s] = outputs 16 s .. 16 s + 15.
inline void OrderedInt32(const V acc[4], V v[4]) {
  {  // a 4 x 16 int32 transpose: unpacks, then the 128-bit lanes
    const V t0 = _mm512_unpacklo_epi32(acc[0], acc[1]), t1 = _mm512_unpackhi_epi32(acc[0], acc[1]);
    const V t2 = _mm512_unpacklo_epi32(acc[2], acc[3]), t3 = _mm512_unpackhi_epi32(acc[2], acc[3]);
    // u[j] lane L: outputs 16 L + 4 j .. + 3.
    const V u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const V u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const V a = _mm512_shuffle_i32x4(u0, u1, 0x44), b = _mm512_shuffle_i32x4(u2, u3, 0x44);
    const V c = _mm512_shuffle_i32x4(u0, u1, 0xEE), d = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    v[0] = _mm512_shuffle_i32x4(a, b, 0x88);
    v[1] = _mm512_shuffle_i32x4(a, b, 0xDD);
    v[2] = _mm512_shuffle_i32x4(c, d, 0x88);
    v[3] = _mm512_shuffle_i32x4(c, d, 0xDD);
  }
}

// The direct path's values for a call, for DirectChannels.
struct Direct {
  const int32_t* words = nullptr;     // [m][kh * ng]
  const int32_t* offset = nullptr;    // [m]
  const int64_t* accmax = nullptr;    // [m]
  const float* multiplier = nullptr;  // [m]; null for y_int32
  uint8_t* y = nullptr;               // or y32: the output tensor
  int32_t* y32 = nullptr;
  int64_t c = 0, mg = 1, m = 0, hw = 0;  // hw: an input plane's bytes
  size_t plane_bytes = 0;
  const uint8_t* x = nullptr;  // the input: plane (b, ci) at x + (b * c + ci) * hw
  dwv::PlaneIn in;
  dwq::Epi e;  // the multiplier set per channel
};

// Channels [c0, c1) of image b on the direct path (stride 1, dilation_w 1, no residual on y),
// planes the task's two plane slots: the function for a kernel height and group count.
using DirectFn = void (*)(const Geo&, const Direct&, __m512i, uint8_t*, int64_t, int64_t, int64_t);
DirectFn PickDirect(int64_t kh, int64_t ng);

}  // namespace dwt
#endif
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
