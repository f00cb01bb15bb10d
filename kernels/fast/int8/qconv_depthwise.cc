// Integer depthwise convolution (c / group == 1, any channel multiplier, stride, dilation, pads):
// each input plane is copied once into a zero-point-bordered byte plane (split into stride_w
// column phases, so a tap of a strided row is a contiguous load), then every output row is a
// vector of pixels accumulating its taps: raw bytes widened to int32 lanes, times the tap's
// weight in the low int16 of a word whose high int16 is 0 (pmaddwd, or vpdpwssd with VNNI:
// lo*w + hi*0, exact). offset[m] = bias - x_zero_point * sum(w) undoes the raw inputs. Four
// output rows at a time keep four independent accumulator chains in flight.
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
  const uint8_t* bytes = nullptr;  // [stride_w phases][hp][wq]
  int64_t hp = 0, wq = 0;
  bool is_signed = false;
};

// Accumulators of rows [oy, oy + RB) of one output channel into acc[r][owr]; KH/KW = 0: the
// problem's (run-time) kernel size. A macro for the VNNI copy's own target attribute.
#define FUSEFUZZ_Q8_DW_BODY(MAC)                                                            \
  const int64_t kh = KH ? KH : p.kh, kw = KW ? KW : p.kw;                                  \
  for (int64_t ox = 0; ox < p.ow; ox += kLanes) {                                          \
    V acc[RB];                                                                             \
    for (int r = 0; r < RB; ++r) acc[r] = Zero();                                          \
    for (int64_t ky = 0; ky < kh; ++ky) {                                                  \
      for (int64_t kx = 0; kx < kw; ++kx) {                                                \
        const V wv = Set1(w[ky * kw + kx]);                                                \
        const int64_t c = kx * p.dilation_w;                                               \
        const uint8_t* col =                                                               \
            pl.bytes + (c % p.stride_w) * pl.hp * pl.wq + ox + c / p.stride_w;             \
        for (int r = 0; r < RB; ++r) {                                                     \
          const int64_t yy = (oy + r) * p.stride_h + ky * p.dilation_h;                    \
          acc[r] = MAC(acc[r], Load8(col + yy * pl.wq, pl.is_signed), wv);                 \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
    for (int r = 0; r < RB; ++r) Store(out + r * owr + ox, acc[r]);                        \
  }

template <int KH, int KW, int RB>
void RowsMadd(const QConvProblem& p, const Plane& pl, const int32_t* w, int64_t oy, int64_t owr,
              int32_t* out) {
  FUSEFUZZ_Q8_DW_BODY(MAdd)
}

#ifdef FUSEFUZZ_Q8_VNNI
template <int KH, int KW, int RB>
FUSEFUZZ_Q8_VNNI_TARGET void RowsVnni(const QConvProblem& p, const Plane& pl, const int32_t* w,
                                      int64_t oy, int64_t owr, int32_t* out) {
  FUSEFUZZ_Q8_DW_BODY(Dpwssd)
}
#endif
#undef FUSEFUZZ_Q8_DW_BODY

using RowsFn = void (*)(const QConvProblem&, const Plane&, const int32_t*, int64_t, int64_t,
                        int32_t*);
constexpr int kRows = 4;

template <int KH, int KW>
void RowsFor(bool vnni, RowsFn& four, RowsFn& one) {
#ifdef FUSEFUZZ_Q8_VNNI
  if (vnni) {
    four = &RowsVnni<KH, KW, kRows>;
    one = &RowsVnni<KH, KW, 1>;
    return;
  }
#else
  (void)vnni;
#endif
  four = &RowsMadd<KH, KW, kRows>;
  one = &RowsMadd<KH, KW, 1>;
}

}  // namespace

void RunDepthwise(const QPacked& pk, const QConvProblem& p, int threads) {
  const int64_t mg = p.m / p.group, taps = p.kh * p.kw, opix = p.oh * p.ow;
  const int64_t owr = (p.ow + kLanes - 1) / kLanes * kLanes;
  const int64_t hp = (p.oh - 1) * p.stride_h + (p.kh - 1) * p.dilation_h + 1;
  const int64_t reach = ((p.kw - 1) * p.dilation_w) / p.stride_w;
  const int64_t wq = owr + reach + 1;
  const int64_t sw = p.stride_w;
  const uint8_t pad = static_cast<uint8_t>(p.x_zero_point & 0xFF);
  RowsFn four = nullptr, one = nullptr;
  if (p.kh == 3 && p.kw == 3) {
    RowsFor<3, 3>(pk.vnni, four, one);
  } else {
    RowsFor<0, 0>(pk.vnni, four, one);
  }
  // Load8 reads up to 16 bytes from the last vector's start: room past the last phase.
  const size_t plane_bytes = static_cast<size_t>(sw * hp * wq + 16);
  ParallelFor(threads, p.n * p.c, [&](int64_t task) {
    const int64_t b = task / p.c, ci = task % p.c;
    std::vector<uint8_t> bytes(plane_bytes, pad);
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
          std::memcpy(row + q0, in + (q0 - p.pad_left), static_cast<size_t>(q1 - q0));
          continue;
        }
        for (int64_t q = 0; q < wq; ++q) {
          const int64_t ix = q * sw + ph - p.pad_left;
          if (ix >= 0 && ix < p.w) row[q] = in[ix];
        }
      }
    }
    Plane pl;
    pl.bytes = bytes.data();
    pl.hp = hp;
    pl.wq = wq;
    pl.is_signed = p.x_type == QStorage::kInt8;
    std::vector<int32_t> acc(static_cast<size_t>(kRows * owr));
    for (int64_t j = 0; j < mg; ++j) {
      const int64_t oc = ci * mg + j;
      const int32_t* w = pk.w.data() + oc * taps;
      Requant r = RequantOf(p, oc, pk.offset[static_cast<size_t>(oc)]);
      const int64_t ybase = (b * p.m + oc) * opix;
      for (int64_t oy = 0; oy < p.oh;) {
        const int rows = p.oh - oy >= kRows ? kRows : 1;
        (rows == kRows ? four : one)(p, pl, w, oy, owr, acc.data());
        for (int rr = 0; rr < rows; ++rr) {
          const int64_t yi = ybase + (oy + rr) * p.ow;
          r.residual = p.residual && !p.y_int32 ? p.residual + yi : nullptr;
          EmitRow(r, acc.data() + rr * owr, p.ow, p.y_int32 ? nullptr : p.y + yi,
                  p.y_int32 ? p.y_int32 + yi : nullptr);
        }
        oy += rows;
      }
    }
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
