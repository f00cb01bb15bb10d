// Integer depthwise convolution by tap groups (AVX-512 copy, VNNI + VBMI CPUs, rows of at
// least 14 outputs; docs/kernels.md "Int8"). Each input plane is copied into a zero-point-
// bordered byte plane (int8 inputs flipped to u8 by x ^ 0x80), and one vector is 16 output
// pixels of one channel. One vpdpbusd multiplies, per output lane, the 4 input bytes that 4
// consecutive taps of a kernel row read by those taps' 4 weights (u8 x s8 summed into the int32
// lane, exact: vpdpbusd does not saturate); a 3-wide row is one group with a 4th weight 0, wider
// rows take ceil(kw / 4): 3x3 is 3 vpdpbusd per 16 outputs, where one tap per instruction needs
// 9. The accumulator starts at offset = bias - zu * sum(w) (zu = x_zero_point, + 128 for int8),
// which undoes the shifted inputs exactly. Stride 1, dilation 1 runs on the flattened grid of the
// padded plane (output q = oy * wp + ox) with the outputs of a 64-position block interleaved
// (vector r: q + 4 i + r), so every tap-group load is a plain load; its bytes go straight into
// the NCHW plane (one vpermb per block). Dilation uses vpermb per load on the grid, other strides
// run row by row.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qdw_buffers.h"
#include "kernels/fast/int8/qdw_requant.h"
#include "kernels/fast/int8/qdw_taps.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
namespace {

using dwq::Epi;
using dwq::PackedBytes;
using dwq::ResidualTerms;
using dwt::Accumulate;
using dwt::Direct;
using dwt::DirectFn;
using dwt::Geo;
using dwt::kVec;
using dwt::OrderedInt32;
using dwt::PickDirect;
using dwv::Buffers;
using dwv::OutputTable;
using dwv::RowCopy;
using dwv::RowGroups;
using dwv::TableFor;
using dwv::ThreadBuffers;
using int8::QConvProblem;
using int8::QStorage;

// One output channel: its words [kh][ng] and epilogue, and where its outputs go (flat: the
// grid buffers, wp per row; rows: the NCHW plane).
struct Out {
  const int32_t* words = nullptr;
  int32_t offset = 0, y_zero_point = 0, residual_zero_point = 0, y_min = 0, y_max = 255;
  float multiplier = 1, lo = 0, hi = 0, residual_multiplier = 0;
  bool residual_signed = false;
  const uint8_t* residual = nullptr;
  uint8_t* y = nullptr;
  int32_t* y32 = nullptr;
};

// The same operations, in the same order, as RequantStore (qsimd.h); the offset is already in
// acc (int32 adds wrap: the same residue). k: the lanes stored, at element `at`.
inline void Finish(const Out& o, const Epi& e, V acc, int64_t at, __mmask16 k) {
  constexpr __mmask16 kAll = 0xFFFF;  // whole vectors: plain stores
  if (o.y32) {
    if (k == kAll) return Store(o.y32 + at, acc);
    return _mm512_mask_storeu_epi32(o.y32 + at, k, acc);
  }
  F v = Mul(ToFloat(acc), e.multiplier);
  if (o.residual) {
    const __m128i rb = _mm_maskz_loadu_epi8(k, o.residual + at);
    const V r = o.residual_signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
    v = AddF(v, Mul(ToFloat(Sub(r, e.residual_zero_point)), e.residual_multiplier));
  }
  const V q = Add(Round(MinF(MaxF(v, e.lo), e.hi)), e.y_zero_point);
  if (k == kAll) return Store8(o.y + at, q);
  _mm_mask_storeu_epi8(o.y + at, k, _mm512_cvtepi32_epi8(q));
}

// The 64 output bytes, in output order, of an interleaved block at `at` (acc[r] lane i is
// output 4 i + r), the same operations per lane as Finish.
FUSEFUZZ_Q8_VBMI_TARGET inline V InterleavedBytes(const Out& o, const Epi& e, const V acc[4],
                                                  int64_t at, bool y_signed);

// Finish for an interleaved block: the bytes (or the int32) out in output order.
FUSEFUZZ_Q8_VBMI_TARGET inline void FinishInterleaved(const Out& o, const Epi& e, const V acc[4],
                                                      int64_t at, bool y_signed) {
  if (!o.y32) return Store(o.y + at, InterleavedBytes(o, e, acc, at, y_signed));
  V v[4];
  OrderedInt32(acc, v);
  for (int s = 0; s < 4; ++s) Store(o.y32 + at + 16 * s, v[s]);
}

FUSEFUZZ_Q8_VBMI_TARGET inline V InterleavedBytes(const Out& o, const Epi& e, const V acc[4],
                                                  int64_t at, bool y_signed) {
  F rt[4];
  if (o.residual) {  // vector r's residual bytes (outputs 4 i + r) into 128-bit lane r
    alignas(64) static constexpr uint8_t kDeal[64] = {
        0, 4, 8,  12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60,  //
        1, 5, 9,  13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61,  //
        2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62,  //
        3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63};
    ResidualTerms(e, _mm512_permutexvar_epi8(_mm512_load_si512(kDeal), Load(o.residual + at)),
                  o.residual_signed, rt);
  }
  // Byte 16 L + 4 r + j of the packs is q[r][4 L + j], output 16 L + 4 j + r, which the shuffle
  // moves there.
  const V p = PackedBytes(e, acc, o.residual ? rt : nullptr, y_signed);
  const V order =
      _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  return _mm512_shuffle_epi8(p, order);
}

Epi EpiOf(const Out& o, bool y_signed) {
  return dwq::EpiOf(o.multiplier, o.lo, o.hi, o.residual_multiplier, o.y_zero_point,
                    o.residual_zero_point, o.y_min, o.y_max, y_signed);
}

template <int KH, int NG>
FUSEFUZZ_Q8_VBMI_TARGET void Channel(const Geo& geo, const uint8_t* plane, __m512i idx,
                                     const Out& out) {
  // Local copies: the byte stores could alias the caller's structs, which would be reloaded.
  const Geo g = geo;
  const Out o = out;
  V wr[KH * NG > 0 ? KH * NG : 1];
  if constexpr (KH * NG > 0) {
#pragma GCC unroll 14
    for (int t = 0; t < KH * NG; ++t) wr[t] = Set1(o.words[t]);
  }
  const V offset = Set1(o.offset);
  const Epi e = EpiOf(o, g.y_signed);
  constexpr __mmask16 kAll = 0xFFFF;
  if (g.flat && g.dw == 1) {
    // Stride 1, dilation 1: vector r of the block at q holds outputs q + 4 i + r, so the load at
    // q + r already holds every lane's 4 input bytes in its dword i: no shuffle per tap.
    for (int64_t blk = 0; blk < g.nblk; ++blk) {
      const int64_t q = blk * kVec * 16;
      V acc[kVec];
      Accumulate<KH, NG, kVec, false>(g, plane + q, 1, idx, wr, o.words, offset, acc);
      FinishInterleaved(o, e, acc, q, g.y_signed);
    }
    return;
  }
  if (g.flat) {
    for (int64_t blk = 0; blk < g.nblk; ++blk) {
      const int64_t q = blk * kVec * 16;
      V acc[kVec];
      Accumulate<KH, NG, kVec, true>(g, plane + q, 16, idx, wr, o.words, offset, acc);
#pragma GCC unroll 4
      for (int r = 0; r < kVec; ++r) Finish(o, e, acc[r], q + 16 * r, kAll);
    }
    return;
  }
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const uint8_t* row = plane + oy * g.sh * g.wp;
    const int64_t at = oy * g.ow;
    int64_t ox = 0;
    for (; ox + kVec * 16 <= g.ow; ox += kVec * 16) {
      V acc[kVec];
      Accumulate<KH, NG, kVec, true>(g, row + ox * g.sw, 16 * g.sw, idx, wr, o.words, offset, acc);
#pragma GCC unroll 4
      for (int r = 0; r < kVec; ++r) Finish(o, e, acc[r], at + ox + 16 * r, kAll);
    }
    for (; ox < g.ow; ox += 16) {
      V acc[1];
      Accumulate<KH, NG, 1, true>(g, row + ox * g.sw, 0, idx, wr, o.words, offset, acc);
      const int64_t n = g.ow - ox;
      Finish(o, e, acc[0], at + ox, n >= 16 ? kAll : static_cast<__mmask16>((1u << n) - 1));
    }
  }
}

using ChannelFn = void (*)(const Geo&, const uint8_t*, __m512i, const Out&);

ChannelFn PickChannel(int64_t kh, int64_t ng) {
  if (kh == 3 && ng == 1) return &Channel<3, 1>;
  if (kh == 5 && ng == 2) return &Channel<5, 2>;
  return &Channel<0, 0>;
}

// Where this kernel runs: one 64-byte load must hold every byte a vector's group reads
// (15 * sw + 3 * dw < 64), and rows of at least 14 outputs. Each plane costs its row copies
// and a fixed setup, which on 7x7 planes (one 64-position block each) cost more than the taps
// save: measured (fusion_bench dw_relu6_requant, one run, load 4), this kernel took 35 us on
// the 7x7 row where the channel-blocked kernel took 27, and 28 / 35 us against 58 / 50 on the
// 28x28 / 14x14 rows.
bool Fits(const QConvProblem& p) { return 15 * p.stride_w + 3 * p.dilation_w < 64 && p.ow >= 14; }

}  // namespace

bool RunDepthwiseVbmi(const QPacked& pk, const QConvProblem& p, int threads) {
  if (pk.wv.empty() || !Fits(p)) return false;
  const int64_t mg = p.m / p.group, opix = p.oh * p.ow, ng = pk.ng;
  Geo g;
  g.oh = p.oh, g.ow = p.ow, g.sh = p.stride_h, g.sw = p.stride_w;
  g.dh = p.dilation_h, g.dw = p.dilation_w, g.kh = p.kh, g.ng = ng;
  g.flat = p.stride_h == 1 && p.stride_w == 1;
  g.y_signed = p.y_type == QStorage::kInt8;
  const int64_t hp = (p.oh - 1) * p.stride_h + (p.kh - 1) * p.dilation_h + 1;
  g.wp = (p.ow - 1) * p.stride_w + (p.kw - 1) * p.dilation_w + 1;
  if (g.flat) {
    // Rows of w + max(pl, pr) bytes rather than w + pl + pr where that saves a block: a row's
    // taps past its end read the next row's left border, pl >= min(pl, pr) bytes of zero point
    // (docs/kernels.md, "Int8": shared border columns).
    const int64_t pl = p.pad_left, pr = g.wp - p.pad_left - p.w, shared = p.w + std::max(pl, pr);
    auto blocks = [&](int64_t wp) { return ((p.oh - 1) * wp + p.ow + 63) / 64; };
    if (pl >= 0 && pr >= 0 && shared >= p.ow && blocks(shared) < blocks(g.wp)) g.wp = shared;
  }
  const int64_t reach = (p.kh - 1) * p.dilation_h * g.wp + (ng - 1) * 4 * p.dilation_w + 64;
  int64_t qp = 0, last = 0;  // flat: the grid's positions; the bytes the last load ends at
  if (g.flat) {
    const int64_t qv = (p.oh - 1) * g.wp + p.ow;
    g.nblk = (qv + kVec * 16 - 1) / (kVec * 16);
    qp = g.nblk * kVec * 16;
    // + 64: the direct path's carried loads end 64 bytes past the block's last row.
    last = std::max(qp - 16 + reach, qp + 64 + (p.kh - 1) * p.dilation_h * g.wp);
  } else {
    const int64_t owr = (p.ow + 15) / 16 * 16;
    last = (p.oh - 1) * p.stride_h * g.wp + (owr - 16) * p.stride_w + reach;
  }
  // + 64: the last row's padded copy may write a vector past the plane.
  const size_t plane_bytes = static_cast<size_t>(std::max(hp * g.wp + 64, last));
  const bool is_signed = p.x_type == QStorage::kInt8;
  const uint8_t flip = is_signed ? 0x80 : 0;
  const uint8_t pad = static_cast<uint8_t>((p.x_zero_point & 0xFF) ^ flip);
  const int64_t q0 = std::clamp<int64_t>(p.pad_left, 0, g.wp);
  const int64_t q1 = std::clamp<int64_t>(p.pad_left + p.w, q0, g.wp);
  // Lane i, byte k of a group: the input at sw * i + k * dw from the load's first byte.
  alignas(64) uint8_t idx_bytes[64];
  for (int i = 0; i < 16; ++i) {
    for (int k = 0; k < 4; ++k) {
      idx_bytes[4 * i + k] = static_cast<uint8_t>(p.stride_w * i + k * p.dilation_w);
    }
  }
  const __m512i idx = _mm512_load_si512(idx_bytes);
  // Outputs straight into y or y_int32 (no grid) on the interleaved path, but for a residual,
  // which is read on the grid.
  const bool direct = g.flat && p.dilation_w == 1 && !(p.residual && !p.y_int32);
  if (direct) {
    const OutputTable& t = TableFor(g.nblk, g.wp, p.oh, p.ow);
    g.gather = t.gather.data(), g.valid = t.valid.data(), g.first = t.first.data(), g.opix = opix;
  }
  const ChannelFn channel = PickChannel(p.kh, ng);
  const float lo = static_cast<float>(p.y_min - p.y_zero_point);
  const float hi = static_cast<float>(p.y_max - p.y_zero_point);
  constexpr int64_t kChunk = 16;  // channels per task: the plane's border is set once per task
  const int64_t chunks = (p.c + kChunk - 1) / kChunk;
  // A plane is copied one channel ahead and a grid copied out one output behind, into and
  // from the other of two buffers: the vector loads never wait for just-stored bytes (a load
  // over a pending masked store is not forwarded, it waits for the store to reach the cache).
  const size_t ysize = g.flat ? static_cast<size_t>(qp) + 64 : 0;  // + CopyOut's reads
  const __m512i padv = _mm512_set1_epi8(static_cast<char>(pad));
  const __m512i flipv = _mm512_set1_epi8(static_cast<char>(flip));
  const RowCopy in_row(q1 - q0), out_row(p.ow);
  const uint8_t* x_end = p.x + p.n * p.c * p.h * p.w;
  // The input rows that land in the plane: yy = iy + pad_top in [0, hp).
  const int64_t iy0 = std::clamp<int64_t>(-p.pad_top, 0, p.h);
  const int64_t iy1 = std::clamp<int64_t>(hp - p.pad_top, iy0, p.h);
  // Grid rows of up to 32 bytes where every input column lands: in groups (GroupsIn).
  std::optional<RowGroups> groups;
  if (g.wp <= 32 && q0 == p.pad_left && q1 - q0 == p.w) groups.emplace(p.w, g.wp, iy1 - iy0);
  dwv::PlaneIn in;
  in.groups = groups ? &*groups : nullptr, in.row = &in_row, in.x_end = x_end;
  in.src_at = iy0 * p.w + (q0 - p.pad_left), in.dst_at = (iy0 + p.pad_top) * g.wp + q0;
  in.rows = iy1 - iy0, in.w = p.w, in.wp = g.wp;
  in.flip = flipv, in.pad = padv;
  Direct dc;
  const DirectFn direct_fn = direct ? PickDirect(p.kh, ng) : nullptr;
  if (direct) {
    dc.words = pk.wv.data(), dc.offset = pk.offv.data(), dc.accmax = pk.accmax.data();
    dc.multiplier = p.y_int32 ? nullptr : p.multiplier;
    dc.y = p.y_int32 ? nullptr : p.y, dc.y32 = p.y_int32;
    dc.c = p.c, dc.mg = mg, dc.m = p.m, dc.hw = p.h * p.w, dc.plane_bytes = plane_bytes;
    dc.x = p.x, dc.in = in;
    dc.e = dwq::EpiOf(1.0f, lo, hi, p.residual_multiplier, p.y_zero_point, p.residual_zero_point,
                      p.y_min, p.y_max, g.y_signed);
  }
  ParallelFor(threads, p.n * chunks, [&](int64_t task) {
    const int64_t b = task / chunks, c0 = (task % chunks) * kChunk;
    const int64_t c1 = std::min(p.c, c0 + kChunk);
    Buffers& buf = ThreadBuffers();
    // 64-byte aligned: the first kernel row's loads of each block then are whole lines.
    uint8_t* planes = Grow(buf.plane, 2 * plane_bytes + 64);
    planes += (64 - reinterpret_cast<uintptr_t>(planes) % 64) % 64;
    std::memset(planes, pad, 2 * plane_bytes);  // the border and the loads' slack: zero point
    if (direct) return direct_fn(g, dc, idx, planes, b, c0, c1);
    uint8_t* ygrid = g.flat && !p.y_int32 ? Grow(buf.y, 2 * ysize) : nullptr;
    int32_t* y32grid = g.flat && p.y_int32 ? Grow(buf.y32, 2 * ysize) : nullptr;
    uint8_t* rgrid = g.flat && p.residual && !p.y_int32 ? Grow(buf.residual, ysize) : nullptr;
    auto copy_in = [&](int64_t ci) {
      dwv::PlaneIntoCall(in, planes + static_cast<size_t>(ci - c0) % 2 * plane_bytes,
                         p.x + (b * p.c + ci) * p.h * p.w);
    };
    int64_t pending = -1;  // flat: the output plane whose grid waits in slot pending_slot
    size_t pending_slot = 0;
    auto copy_out = [&]() {
      if (pending < 0) return;
      for (int64_t oy = 0; oy < p.oh; ++oy) {  // the grid's first ow columns are outputs
        if (p.y_int32) {
          std::memcpy(p.y_int32 + pending + oy * p.ow, y32grid + pending_slot * ysize + oy * g.wp,
                      static_cast<size_t>(p.ow) * sizeof(int32_t));
        } else {
          out_row.Out(p.y + pending + oy * p.ow, ygrid + pending_slot * ysize + oy * g.wp,
                      p.y + pending + opix);
        }
      }
      pending = -1;
    };
    size_t slot = 0;
    copy_in(c0);
    for (int64_t ci = c0; ci < c1; ++ci) {
      if (ci + 1 < c1) copy_in(ci + 1);
      const uint8_t* plane = planes + static_cast<size_t>(ci - c0) % 2 * plane_bytes;
      for (int64_t j = 0; j < mg; ++j) {
        const int64_t oc = ci * mg + j, ybase = (b * p.m + oc) * opix;
        Out o;
        o.words = pk.wv.data() + oc * p.kh * ng;
        o.offset = pk.offv[static_cast<size_t>(oc)];
        o.multiplier = p.y_int32 ? 1.0f : p.multiplier[oc];
        o.lo = lo, o.hi = hi;
        o.y_zero_point = p.y_zero_point;
        o.y_min = p.y_min, o.y_max = p.y_max;
        o.residual_zero_point = p.residual_zero_point;
        o.residual_multiplier = p.residual_multiplier;
        o.residual_signed = p.residual_type == QStorage::kInt8;
        const uint8_t* res = p.residual && !p.y_int32 ? p.residual + ybase : nullptr;
        if (!g.flat) {
          o.residual = res;
          o.y = p.y_int32 ? nullptr : p.y + ybase;
          o.y32 = p.y_int32 ? p.y_int32 + ybase : nullptr;
          channel(g, plane, idx, o);
          continue;
        }
        if (res) {  // the residual's rows onto the grid
          for (int64_t oy = 0; oy < p.oh; ++oy) {
            CopyBytes(rgrid + oy * g.wp, res + oy * p.ow, p.ow);
          }
          o.residual = rgrid;
        }
        o.y = ygrid ? ygrid + slot * ysize : nullptr;
        o.y32 = y32grid ? y32grid + slot * ysize : nullptr;
        channel(g, plane, idx, o);
        copy_out();  // the previous output, from the other slot
        pending = ybase, pending_slot = slot;
        slot ^= 1;
      }
    }
    copy_out();
  });
  return true;
}

#else  // the SSE2 and AVX2 copies: no VBMI

bool RunDepthwiseVbmi(const QPacked&, const int8::QConvProblem&, int) { return false; }

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
