// The tap-group depthwise kernel's buffers and copies (qconv_dw_vbmi.cc only; AVX-512 copy):
// row copies in whole 64-byte moves, short rows copied in groups, the output-column tables
// of the interleaved path, and the thread's own grown-once buffers.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <vector>

#include "kernels/fast/int8/qkernels.h"  // Grow

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
#if defined(__AVX512BW__)
namespace dwv {

// Row copies of a fixed length n, in whole 64-byte moves with no per-row mask arithmetic (the
// tail's mask is computed once); only the very end of a buffer is moved under a mask.
struct RowCopy {
  int64_t n = 0;
  __mmask64 tail = 0;  // the bytes of the last (partial or whole) 64 that are the row's
  RowCopy(int64_t bytes) : n(bytes) {
    const int64_t t = n - (n > 0 ? (n - 1) / 64 * 64 : 0);
    tail = t >= 64 ? ~__mmask64{0} : (__mmask64{1} << t) - 1;
  }
  // n bytes from s, flipped by f (0x80: int8 to u8 + 128), to d; the rest of the last 64 bytes
  // written with pad. Rows go in increasing order, so what the overrun covers is border (pad)
  // or a later row's bytes, which that row's copy writes. Reads stay before s_end.
  void In(uint8_t* d, const uint8_t* s, __m512i f, __m512i pad, const uint8_t* s_end) const {
    int64_t left = n;
    for (; left > 64; left -= 64, d += 64, s += 64) {
      _mm512_storeu_si512(d, _mm512_xor_si512(_mm512_loadu_si512(s), f));
    }
    if (left <= 0) return;
    const __m512i x = s + 64 <= s_end ? _mm512_loadu_si512(s) : _mm512_maskz_loadu_epi8(tail, s);
    _mm512_storeu_si512(d, _mm512_mask_blend_epi8(tail, pad, _mm512_xor_si512(x, f)));
  }
  // n bytes from s (readable 64 bytes past) to d: the overrun of the last 64 bytes is a later
  // row's, written after; a masked store where it would pass d_end.
  void Out(uint8_t* d, const uint8_t* s, const uint8_t* d_end) const {
    int64_t left = n;
    for (; left > 64; left -= 64, d += 64, s += 64) {
      _mm512_storeu_si512(d, _mm512_loadu_si512(s));
    }
    if (left <= 0) return;
    if (d + 64 <= d_end) return _mm512_storeu_si512(d, _mm512_loadu_si512(s));
    _mm512_mask_storeu_epi8(d, tail, _mm512_loadu_si512(s));
  }
};

// `rows` rows of rc.n bytes, from s (stride ss) to d (stride ds), as RowCopy::In. Values, not
// the problem's fields: the byte stores could alias those, which would be reloaded each row.
inline void CopyRowsIn(uint8_t* d, int64_t ds, const uint8_t* s, int64_t ss, int64_t rows,
                       const RowCopy& rc, __m512i f, __m512i pad, const uint8_t* s_end) {
  const __mmask64 tail = rc.tail;
  for (int64_t r = 0; r < rows; ++r, d += ds, s += ss) {
    if (rc.n <= 64 && s + 64 <= s_end) {
      const __m512i x = _mm512_xor_si512(_mm512_loadu_si512(s), f);
      _mm512_storeu_si512(d, _mm512_mask_blend_epi8(tail, pad, x));
      continue;
    }
    rc.In(d, s, f, pad, s_end);
  }
}

// Input rows of up to 32 bytes copied R = 64 / wp at a time: R consecutive rows of the NCHW
// plane (R * w <= 64 bytes) are one masked load, one vpermb spreads them wp apart with the
// zero point between (the border columns), one store writes them. Row copies take a load, a
// blend and a store per row: on 14x14 planes (R = 4) a third of the kernel's time.
struct RowGroups {
  int64_t per = 1, w = 0, wp = 0;
  __m512i idx;          // grid byte j * wp + i <- input byte j * w + i (j < per, i < w)
  __mmask64 grid[2]{};  // the grid bytes that take inputs: a whole group, the last group
  __mmask64 load[2]{};  // the input bytes they take
  int64_t groups = 0;   // groups of per rows; the last one has last_rows
  RowGroups(int64_t w_, int64_t wp_, int64_t rows) : per(64 / wp_), w(w_), wp(wp_) {
    alignas(64) uint8_t bytes[64] = {};
    groups = (rows + per - 1) / per;
    const int64_t last_rows = rows - (groups - 1) * per;
    for (int64_t j = 0; j < per; ++j) {
      for (int64_t i = 0; i < w; ++i) {
        const int64_t at = j * wp + i;
        bytes[at] = static_cast<uint8_t>(j * w + i);
        grid[0] |= __mmask64{1} << at;
        if (j < last_rows) grid[1] |= __mmask64{1} << at;
      }
    }
    idx = _mm512_load_si512(bytes);
    load[0] = per * w >= 64 ? ~__mmask64{0} : (__mmask64{1} << (per * w)) - 1;
    load[1] = last_rows * w >= 64 ? ~__mmask64{0} : (__mmask64{1} << (last_rows * w)) - 1;
  }
};

// The rows of one plane s (all w columns land, from grid column d's) into d, flipped by f
// (pad: the flipped zero point). Each store's overrun lands on later rows, written after, or
// the border, which it sets to the zero point.
__attribute__((target("avx512vbmi"))) inline void GroupsIn(uint8_t* d, const uint8_t* s,
                                                           const RowGroups& rg, __m512i f,
                                                           __m512i pad) {
  const __m512i raw = _mm512_xor_si512(pad, f);  // flipped back with the inputs
  const int64_t dstep = rg.per * rg.wp, sstep = rg.per * rg.w;
  // Values, not rg's fields: the byte stores could alias those, which would be reloaded.
  const int64_t groups = rg.groups;
  if (groups == 0) return;  // no input row lands
  const __m512i idx = rg.idx;
  const __mmask64 grid = rg.grid[0], load = rg.load[0];
  for (int64_t k = 0; k + 1 < groups; ++k, d += dstep, s += sstep) {
    const __m512i x = _mm512_maskz_loadu_epi8(load, s);
    _mm512_storeu_si512(d, _mm512_xor_si512(_mm512_mask_permutexvar_epi8(raw, grid, idx, x), f));
  }
  const __m512i x = _mm512_maskz_loadu_epi8(rg.load[1], s);  // the last group
  _mm512_storeu_si512(d,
                      _mm512_xor_si512(_mm512_mask_permutexvar_epi8(raw, rg.grid[1], idx, x), f));
}

// Where an input plane's rows land in its bordered plane and how they are copied: the task
// loops of qconv_dw_vbmi.cc and qconv_dw_direct.cc copy a plane by PlaneInto.
struct PlaneIn {
  const RowGroups* groups = nullptr;  // row groups, else rows by `row`
  const RowCopy* row = nullptr;
  const uint8_t* x_end = nullptr;  // the end of the readable input
  int64_t src_at = 0, dst_at = 0;  // the first copied byte, in the input plane and the plane
  int64_t rows = 0, w = 0, wp = 0;
  __m512i flip, pad;  // int8 to u8, and the flipped zero point
};

// CopyRowsIn as a call: inlined into the direct path's channel loop it made the 56x56 row 8%
// slower.
__attribute__((noinline)) inline void CopyRowsOut(uint8_t* d, int64_t ds, const uint8_t* s,
                                                  int64_t ss, int64_t rows, const RowCopy& rc,
                                                  __m512i f, __m512i pad, const uint8_t* s_end) {
  CopyRowsIn(d, ds, s, ss, rows, rc, f, pad, s_end);
}

// The input plane at src into plane. Inlined: called between the direct path's channels, the
// call measured 5-8% slower on 14x14 and 28x28 planes.
__attribute__((target("avx512vbmi"), always_inline)) inline void PlaneInto(const PlaneIn& c,
                                                                           uint8_t* plane,
                                                                           const uint8_t* src) {
  if (c.groups) return GroupsIn(plane + c.dst_at, src + c.src_at, *c.groups, c.flip, c.pad);
  CopyRowsOut(plane + c.dst_at, c.wp, src + c.src_at, c.w, c.rows, *c.row, c.flip, c.pad, c.x_end);
}
// PlaneInto for code without the VBMI target, which cannot inline it.
__attribute__((target("avx512vbmi"), noinline)) inline void PlaneIntoCall(const PlaneIn& c,
                                                                          uint8_t* plane,
                                                                          const uint8_t* src) {
  PlaneInto(c, plane, src);
}

// The direct path's tables for one grid, kept by the calling thread for the last grid it saw
// (a model runs the same layer again): built once, not per call.
struct OutputTable {
  int64_t nblk = -1, wp = 0, oh = 0, ow = 0;
  std::vector<uint8_t> gather;
  std::vector<uint64_t> valid;
  std::vector<int64_t> first;
};
inline const OutputTable& TableFor(int64_t nblk, int64_t wp, int64_t oh, int64_t ow) {
  thread_local OutputTable t;
  if (t.nblk == nblk && t.wp == wp && t.oh == oh && t.ow == ow) return t;
  t.nblk = nblk, t.wp = wp, t.oh = oh, t.ow = ow;
  t.gather.assign(static_cast<size_t>(nblk * 64), 0);
  t.first.assign(static_cast<size_t>(nblk), oh * ow);
  t.valid.assign(static_cast<size_t>(nblk), 0);
  int64_t oy = 0, ox = 0;  // grid position blk * 64 + i, walked in order
  for (int64_t blk = 0; blk < nblk; ++blk) {
    int64_t k = 0;
    for (int64_t i = 0; i < 64; ++i) {
      if (ox < ow && oy < oh) {
        if (k == 0) t.first[static_cast<size_t>(blk)] = oy * ow + ox;
        // Grid position i = 16 L + 4 j + r of the block is byte 16 L + 4 r + j of its packs
        // (qdw_requant.h: vector r lane 4 L + j), so one vpermb both orders and gathers.
        t.gather[static_cast<size_t>(blk * 64 + k++)] =
            static_cast<uint8_t>((i & ~15) | (i & 3) << 2 | (i >> 2 & 3));
        t.valid[static_cast<size_t>(blk)] |= uint64_t{1} << i;
      }
      if (++ox == wp) ox = 0, ++oy;
    }
  }
  return t;
}

// The thread's buffers, grown as needed and kept: no allocation per task.
struct Buffers {
  std::vector<uint8_t> plane, y, residual;
  std::vector<int32_t> y32;
};
inline Buffers& ThreadBuffers() {
  thread_local Buffers b;
  return b;
}

}  // namespace dwv
#endif
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
