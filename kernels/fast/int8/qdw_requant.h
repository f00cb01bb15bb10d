// The requantization of four accumulator vectors into 64 bytes, shared by the depthwise kernels
// that pack four vectors at once (qconv_dw_vbmi.cc, qconv_dw_regs.cc; AVX-512 copy): the same
// operations, in the same order, as RequantStore (qsimd.h), with saturating packs doing most
// of the clamp.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
#if defined(__AVX512BW__)
namespace dwq {

struct Epi {
  F multiplier, lo, hi, residual_multiplier;
  V y_zero_point, residual_zero_point;
  V zero_point16, y_min8, y_max8;  // PackedBytes: zy in int16 lanes, the bounds in bytes
  // PackedBytes' steps that change a byte: zy != 0, bounds inside the type (the packs
  // saturate to its range). A ReLU6 layer's usual u8 output (zy = 0, y_min = 0) skips two
  // adds and a max of a block's ~37 vector operations.
  bool add_zero_point = true, clamp_min = true, clamp_max = true;
};

inline Epi EpiOf(float multiplier, float lo, float hi, float residual_multiplier,
                 int32_t y_zero_point, int32_t residual_zero_point, int32_t y_min, int32_t y_max,
                 bool y_signed) {
  Epi e;
  e.multiplier = SetF(multiplier);
  e.lo = SetF(lo);
  e.hi = SetF(hi);
  e.residual_multiplier = SetF(residual_multiplier);
  e.y_zero_point = Set1(y_zero_point);
  e.residual_zero_point = Set1(residual_zero_point);
  e.zero_point16 = _mm512_set1_epi16(static_cast<int16_t>(y_zero_point));
  e.y_min8 = _mm512_set1_epi8(static_cast<char>(y_min));
  e.y_max8 = _mm512_set1_epi8(static_cast<char>(y_max));
  e.add_zero_point = y_zero_point != 0;
  e.clamp_min = y_min > (y_signed ? -128 : 0);
  e.clamp_max = y_max < (y_signed ? 127 : 255);
  return e;
}

// The residual's float terms, float(r - zr) * mr: vector r's 16 residual bytes are 128-bit
// lane r of `dealt`.
inline void ResidualTerms(const Epi& e, V dealt, bool is_signed, F rt[4]) {
  const __m128i lane[4] = {_mm512_castsi512_si128(dealt), _mm512_extracti32x4_epi32(dealt, 1),
                           _mm512_extracti32x4_epi32(dealt, 2),
                           _mm512_extracti32x4_epi32(dealt, 3)};
  for (int r = 0; r < 4; ++r) {
    const V x = is_signed ? _mm512_cvtepi8_epi32(lane[r]) : _mm512_cvtepu8_epi32(lane[r]);
    rt[r] = Mul(ToFloat(Sub(x, e.residual_zero_point)), e.residual_multiplier);
  }
}

// Whether v = float(acc) * multiplier stays below 2^31 for every |acc| <= acc_max
// (QPacked::accmax): then vcvtps2dq cannot overflow and PackedBytes<false> skips min(hi, v)
// (4 of a block's ~45 vector operations). 2^30: float's rounding of acc and of the product
// moves |v| by less than 2^-22 of it. NaN and infinite multipliers do not fit.
inline bool FitsInt32(int64_t acc_max, float multiplier) {
  return static_cast<double>(acc_max) * std::fabs(static_cast<double>(multiplier)) < 1073741824.0;
}

// The output bytes of acc[0..3] (offset included; rt: the residual terms, or null): byte
// 16 L + 4 r + j is acc[r] lane 4 L + j (the packs work within 128-bit lanes).
//
// RequantStore's q = clamp(round(v), lo, hi) + zy with fewer operations, the same bytes: with
// R = vcvtps2dq(min(hi, v)), the bytes are clamp(sat8(sat16(sat16(R) + zy)), y_min, y_max)
// (saturating packs and add, 64 bytes per clamp). For R = round(v) in range, every step
// between is exact or saturates past the type, which the final clamp takes to the same
// bound; min(hi, v) (hi first: minps returns its second operand, v, for NaN) keeps v below
// 2^31, where vcvtps2dq would answer "indefinite" (INT32_MIN); v = NaN and v <= -2^31 give
// INT32_MIN, which ends at y_min, as the loops' NaN and -inf do.
//
// kClampHi = false, where v < 2^31 is known (FitsInt32, no residual): the same bytes without
// min(hi, v). For v <= hi nothing changes; for v > hi, R = round(v) >= hi, and R > hi gives
// sat16(R) + zy >= min(R + zy, 32767 - 128) > y_max, so the packs and the clamp end at y_max,
// as R = hi does.
template <bool kClampHi = true>
inline V PackedBytes(const Epi& e, const V acc[4], const F* rt, bool y_signed) {
  V q[4];
  for (int r = 0; r < 4; ++r) {
    F v = Mul(ToFloat(acc[r]), e.multiplier);
    if (rt) v = AddF(v, rt[r]);
    q[r] = Round(kClampHi ? MinF(e.hi, v) : v);
  }
  V a = _mm512_packs_epi32(q[0], q[1]), b = _mm512_packs_epi32(q[2], q[3]);
  if (e.add_zero_point) {
    a = _mm512_adds_epi16(a, e.zero_point16);
    b = _mm512_adds_epi16(b, e.zero_point16);
  }
  V y = y_signed ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);
  if (e.clamp_max) y = y_signed ? _mm512_min_epi8(y, e.y_max8) : _mm512_min_epu8(y, e.y_max8);
  if (e.clamp_min) y = y_signed ? _mm512_max_epi8(y, e.y_min8) : _mm512_max_epu8(y, e.y_min8);
  return y;
}

}  // namespace dwq
#endif
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
