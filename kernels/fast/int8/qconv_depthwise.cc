// Integer depthwise convolution (c / group == 1, any channel multiplier, stride, dilation, pads),
// the plane kernel of the SSE2 copy and of the AVX2 copy where its pair-word kernel does not run
// (qconv_dw_avx2.cc: dilation > 1, stride_w > 4); the AVX-512 copy runs qconv_dw_vbmi.cc or the
// channel-blocked kernel, qconv_dw_channels.cc: each input plane is copied once into a
// zero-point-bordered byte plane (split into stride_w column phases, so a tap of a strided row is a
// contiguous load), then every output row is a vector of pixels accumulating its taps: raw bytes
// widened to int32 lanes, times the tap's weight in the low int16 of a word whose high int16 is 0
// (pmaddwd: lo*w + hi*0, exact). offset[m] = bias - x_zero_point * sum(w) undoes the raw
// inputs. Four vectors at a time keep four independent accumulator chains in flight. Stride 1
// runs on the flattened grid of the padded plane (as the GEMM's direct mode), so 7x7 planes fill
// vectors.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
namespace {

using int8::QConvProblem;
using int8::QStorage;

struct Plane {
  const uint8_t* bytes = nullptr;  // flat: [hp][wp]; rows: [stride_w phases][hp][wq]
  int64_t hp = 0, wq = 0;
  bool is_signed = false;
};

constexpr int kRows = 4;  // independent accumulator chains per step

// Stride 1 ("flat"): output position q = oy * wp + ox on the padded plane's grid, tap (ky, kx)
// at q + ky*dh*wp + kx*dw, so one vector covers several short rows; kRows vectors per step.
// Blocks [0, nblk) of kRows * kLanes positions into out. KH/KW = 0: run-time kernel size.
#define FUSEFUZZ_Q8_DW_FLAT(MAC)                                                                 \
  const int64_t kh = KH ? KH : p.kh, kw = KW ? KW : p.kw;                                        \
  for (int64_t blk = 0; blk < nblk; ++blk) {                                                     \
    const int64_t q = blk * kRows * kLanes;                                                      \
    V acc[kRows];                                                                                \
    _Pragma("GCC unroll 4") for (int r = 0; r < kRows; ++r) acc[r] = Zero();                     \
    for (int64_t ky = 0; ky < kh; ++ky) {                                                        \
      for (int64_t kx = 0; kx < kw; ++kx) {                                                      \
        const V wv = Set1(w[ky * kw + kx]);                                                      \
        const uint8_t* src = pl.bytes + q + ky * p.dilation_h * pl.wq + kx * p.dilation_w;       \
        _Pragma("GCC unroll 4") for (int r = 0; r < kRows; ++r) acc[r] =                         \
            MAC(acc[r], Load8(src + r * kLanes, pl.is_signed), wv);                              \
      }                                                                                          \
    }                                                                                            \
    _Pragma("GCC unroll 4") for (int r = 0; r < kRows; ++r) Store(out + q + r * kLanes, acc[r]); \
  }

// Other strides: rows [oy, oy + RB) of one output channel into out[r][owr], each tap a
// contiguous load from its column phase.
#define FUSEFUZZ_Q8_DW_ROWS(MAC)                                                                \
  const int64_t kh = KH ? KH : p.kh, kw = KW ? KW : p.kw;                                       \
  for (int64_t ox = 0; ox < p.ow; ox += kLanes) {                                               \
    V acc[RB];                                                                                  \
    _Pragma("GCC unroll 4") for (int r = 0; r < RB; ++r) acc[r] = Zero();                       \
    for (int64_t ky = 0; ky < kh; ++ky) {                                                       \
      for (int64_t kx = 0; kx < kw; ++kx) {                                                     \
        const V wv = Set1(w[ky * kw + kx]);                                                     \
        const int64_t c = kx * p.dilation_w;                                                    \
        const uint8_t* col = pl.bytes + (c % p.stride_w) * pl.hp * pl.wq + ox + c / p.stride_w; \
        _Pragma("GCC unroll 4") for (int r = 0; r < RB; ++r) {                                  \
          const int64_t yy = (oy + r) * p.stride_h + ky * p.dilation_h;                         \
          acc[r] = MAC(acc[r], Load8(col + yy * pl.wq, pl.is_signed), wv);                      \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    _Pragma("GCC unroll 4") for (int r = 0; r < RB; ++r) Store(out + r * owr + ox, acc[r]);     \
  }

template <int KH, int KW>
void FlatMadd(const QConvProblem& p, const Plane& pl, const int32_t* w, int64_t nblk,
              int32_t* out) {
  FUSEFUZZ_Q8_DW_FLAT(MAdd)
}
template <int KH, int KW, int RB>
void RowsMadd(const QConvProblem& p, const Plane& pl, const int32_t* w, int64_t oy, int64_t owr,
              int32_t* out) {
  FUSEFUZZ_Q8_DW_ROWS(MAdd)
}

#undef FUSEFUZZ_Q8_DW_FLAT
#undef FUSEFUZZ_Q8_DW_ROWS

using FlatFn = void (*)(const QConvProblem&, const Plane&, const int32_t*, int64_t, int32_t*);
using RowsFn = void (*)(const QConvProblem&, const Plane&, const int32_t*, int64_t, int64_t,
                        int32_t*);

struct Kernels {
  FlatFn flat = nullptr;
  RowsFn four = nullptr, one = nullptr;
};

template <int KH, int KW>
Kernels KernelsOf() {
  return {&FlatMadd<KH, KW>, &RowsMadd<KH, KW, kRows>, &RowsMadd<KH, KW, 1>};
}

}  // namespace

void RunDepthwise(const QPacked& pk, const QConvProblem& p, int threads) {
  if (RunDepthwiseVbmi(pk, p, threads) || RunDepthwiseRegs(pk, p, threads) ||
      RunDepthwiseChannels(pk, p, threads) || RunDepthwiseAvx2(pk, p, threads)) {
    return;
  }
  const int64_t mg = p.m / p.group, taps = p.kh * p.kw, opix = p.oh * p.ow;
  const bool flat = p.stride_h == 1 && p.stride_w == 1;
  const int64_t sw = p.stride_w;
  const int64_t hp = (p.oh - 1) * p.stride_h + (p.kh - 1) * p.dilation_h + 1;
  // flat: the grid; rows: each phase row padded to whole vectors plus the taps' reach.
  const int64_t owr = (p.ow + kLanes - 1) / kLanes * kLanes;
  const int64_t wq =
      flat ? p.ow + (p.kw - 1) * p.dilation_w : owr + ((p.kw - 1) * p.dilation_w) / sw + 1;
  const int64_t qv = (p.oh - 1) * wq + p.ow;
  const int64_t nblk = (qv + kRows * kLanes - 1) / (kRows * kLanes);
  const int64_t qp = nblk * kRows * kLanes;
  // Load8 reads up to 16 bytes past a vector's first position: slack after the last tap.
  const size_t plane_bytes =
      flat ? static_cast<size_t>(std::max(hp * wq, qp + (p.kh - 1) * p.dilation_h * wq +
                                                       (p.kw - 1) * p.dilation_w) +
                                 16)
           : static_cast<size_t>(sw * hp * wq + 16);
  const size_t acc_size = static_cast<size_t>(flat ? qp : kRows * owr);
  const uint8_t pad = static_cast<uint8_t>(p.x_zero_point & 0xFF);
  const Kernels kern = p.kh == 3 && p.kw == 3 ? KernelsOf<3, 3>() : KernelsOf<0, 0>();
  // Tasks of up to 8 channels: the buffers are allocated once per task.
  constexpr int64_t kChunk = 8;
  const int64_t chunks = (p.c + kChunk - 1) / kChunk;
  ParallelFor(threads, p.n * chunks, [&](int64_t task) {
    const int64_t b = task / chunks, c0 = (task % chunks) * kChunk;
    std::vector<uint8_t> bytes(plane_bytes), ygrid(flat ? static_cast<size_t>(qp) : 0),
        rgrid(flat && p.residual ? static_cast<size_t>(qp) : 0);
    std::vector<int32_t> acc(acc_size);
    Plane pl;
    pl.bytes = bytes.data();
    pl.hp = hp;
    pl.wq = wq;
    pl.is_signed = p.x_type == QStorage::kInt8;
    for (int64_t ci = c0; ci < std::min(p.c, c0 + kChunk); ++ci) {
      std::fill(bytes.begin(), bytes.end(), pad);
      const uint8_t* src = p.x + (b * p.c + ci) * p.h * p.w;
      for (int64_t ph = 0; ph < sw; ++ph) {
        for (int64_t yy = 0; yy < hp; ++yy) {
          const int64_t iy = yy - p.pad_top;
          if (iy < 0 || iy >= p.h) continue;
          uint8_t* row = bytes.data() + (ph * hp + yy) * wq;
          const uint8_t* in = src + iy * p.w;
          if (sw == 1) {  // the row's inputs land at columns [pad_left, pad_left + w) ∩ [0, wq)
            const int64_t q0 = std::clamp<int64_t>(p.pad_left, 0, wq);
            const int64_t q1 = std::clamp<int64_t>(p.pad_left + p.w, q0, wq);
            CopyBytes(row + q0, in + (q0 - p.pad_left), q1 - q0);
            continue;
          }
          for (int64_t q = 0; q < wq; ++q) {
            const int64_t ix = q * sw + ph - p.pad_left;
            if (ix >= 0 && ix < p.w) row[q] = in[ix];
          }
        }
      }
      for (int64_t j = 0; j < mg; ++j) {
        const int64_t oc = ci * mg + j;
        const int32_t* w = pk.w.data() + oc * taps;
        Requant r = RequantOf(p, oc, pk.offset[static_cast<size_t>(oc)]);
        const int64_t ybase = (b * p.m + oc) * opix;
        uint8_t* y = p.y_int32 ? nullptr : p.y + ybase;
        int32_t* y32 = p.y_int32 ? p.y_int32 + ybase : nullptr;
        const uint8_t* res = p.residual && !p.y_int32 ? p.residual + ybase : nullptr;
        if (flat) {
          kern.flat(p, pl, w, nblk, acc.data());
          if (wq == p.ow || y32) {  // rows contiguous on the grid, or the int32 output
            for (int64_t oy = 0; oy < (wq == p.ow ? 1 : p.oh); ++oy) {
              const int64_t n = wq == p.ow ? opix : p.ow;
              r.residual = res ? res + oy * p.ow : nullptr;
              EmitRow(r, acc.data() + oy * wq, n, y ? y + oy * p.ow : nullptr,
                      y32 ? y32 + oy * p.ow : nullptr);
            }
            continue;
          }
          // One requantization over the grid (residual rows moved onto it), then the rows out.
          if (res) {
            for (int64_t oy = 0; oy < p.oh; ++oy) {
              CopyBytes(rgrid.data() + oy * wq, res + oy * p.ow, p.ow);
            }
            r.residual = rgrid.data();
          }
          RequantRow(r, acc.data(), qv, ygrid.data());
          for (int64_t oy = 0; oy < p.oh; ++oy) {
            CopyBytes(y + oy * p.ow, ygrid.data() + oy * wq, p.ow);
          }
          continue;
        }
        for (int64_t oy = 0; oy < p.oh;) {
          const int rows = p.oh - oy >= kRows ? kRows : 1;
          (rows == kRows ? kern.four : kern.one)(p, pl, w, oy, owr, acc.data());
          for (int rr = 0; rr < rows; ++rr) {
            const int64_t yi = (oy + rr) * p.ow;
            r.residual = res ? res + yi : nullptr;
            EmitRow(r, acc.data() + rr * owr, p.ow, y ? y + yi : nullptr, y32 ? y32 + yi : nullptr);
          }
          oy += rows;
        }
      }
    }
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
