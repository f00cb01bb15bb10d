// The integer vector operations of one ISA copy (docs/kernels.md, "Int8"): int32 lanes, the
// int16-pair multiply-add (pmaddwd), the float32 requantization steps and 8-bit loads and
// stores. Picked by the copy's own -m flags (__AVX512BW__, __AVX2__, else SSE2), so each copy
// of the int8 kernels is written once over `V`. The VNNI operations (vpdpbusd, vpdpwssd) are in
// functions with their own target attribute: only code behind the run-time check calls them.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/fast/int8/qconv.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
constexpr int kLanes = 16;
using V = __m512i;
using F = __m512;
inline V Load(const void* p) { return _mm512_loadu_si512(p); }
inline void Store(void* p, V v) { _mm512_storeu_si512(p, v); }
inline V Set1(int32_t v) { return _mm512_set1_epi32(v); }
inline V Zero() { return _mm512_setzero_si512(); }
inline V Add(V a, V b) { return _mm512_add_epi32(a, b); }
inline V Sub(V a, V b) { return _mm512_sub_epi32(a, b); }
inline V MAdd(V acc, V x, V w) { return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w)); }
inline F ToFloat(V v) { return _mm512_cvtepi32_ps(v); }
inline F SetF(float v) { return _mm512_set1_ps(v); }
inline F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
inline F AddF(F a, F b) { return _mm512_add_ps(a, b); }
inline F MaxF(F a, F b) { return _mm512_max_ps(a, b); }  // NaN in a: b
inline F MinF(F a, F b) { return _mm512_min_ps(a, b); }
inline V Round(F v) { return _mm512_cvtps_epi32(v); }  // MXCSR: nearest, ties to even
inline V Load8(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}
// The low byte of each lane (values already in the storage type's range).
inline void Store8(uint8_t* p, V v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));
}
#elif defined(__AVX2__)
constexpr int kLanes = 8;
using V = __m256i;
using F = __m256;
inline V Load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void Store(void* p, V v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
inline V Set1(int32_t v) { return _mm256_set1_epi32(v); }
inline V Zero() { return _mm256_setzero_si256(); }
inline V Add(V a, V b) { return _mm256_add_epi32(a, b); }
inline V Sub(V a, V b) { return _mm256_sub_epi32(a, b); }
inline V MAdd(V acc, V x, V w) { return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w)); }
inline F ToFloat(V v) { return _mm256_cvtepi32_ps(v); }
inline F SetF(float v) { return _mm256_set1_ps(v); }
inline F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
inline F AddF(F a, F b) { return _mm256_add_ps(a, b); }
inline F MaxF(F a, F b) { return _mm256_max_ps(a, b); }
inline F MinF(F a, F b) { return _mm256_min_ps(a, b); }
inline V Round(F v) { return _mm256_cvtps_epi32(v); }
inline V Load8(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}
inline void Store8(uint8_t* p, V v) {
  v = _mm256_and_si256(v, _mm256_set1_epi32(0xFF));
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(w, w));
}
#else
constexpr int kLanes = 4;
using V = __m128i;
using F = __m128;
inline V Load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline void Store(void* p, V v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
inline V Set1(int32_t v) { return _mm_set1_epi32(v); }
inline V Zero() { return _mm_setzero_si128(); }
inline V Add(V a, V b) { return _mm_add_epi32(a, b); }
inline V Sub(V a, V b) { return _mm_sub_epi32(a, b); }
inline V MAdd(V acc, V x, V w) { return _mm_add_epi32(acc, _mm_madd_epi16(x, w)); }
inline F ToFloat(V v) { return _mm_cvtepi32_ps(v); }
inline F SetF(float v) { return _mm_set1_ps(v); }
inline F Mul(F a, F b) { return _mm_mul_ps(a, b); }
inline F AddF(F a, F b) { return _mm_add_ps(a, b); }
inline F MaxF(F a, F b) { return _mm_max_ps(a, b); }
inline F MinF(F a, F b) { return _mm_min_ps(a, b); }
inline V Round(F v) { return _mm_cvtps_epi32(v); }
inline V Load8(const uint8_t* p, bool is_signed) {
  int32_t four;
  std::memcpy(&four, p, 4);
  const __m128i b = _mm_cvtsi32_si128(four);
  if (is_signed) {  // no pmovsx in SSE2: bytes to the top of each lane, arithmetic shift down
    const __m128i t = _mm_unpacklo_epi8(b, b);
    return _mm_srai_epi32(_mm_unpacklo_epi16(t, t), 24);
  }
  const __m128i z = _mm_setzero_si128();
  return _mm_unpacklo_epi16(_mm_unpacklo_epi8(b, z), z);
}
inline void Store8(uint8_t* p, V v) {
  v = _mm_and_si128(v, _mm_set1_epi32(0xFF));
  const __m128i w = _mm_packs_epi32(v, v);
  const int32_t four = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
  std::memcpy(p, &four, 4);
}
#endif

#if defined(__AVX512BW__)
#define FUSEFUZZ_Q8_VNNI 1
#define FUSEFUZZ_Q8_VNNI_TARGET __attribute__((target("avx512vnni")))
// acc + sum over the 4 bytes of each lane of u8(x) * s8(w), exact (no saturation: vpdpbusd).
FUSEFUZZ_Q8_VNNI_TARGET inline V Dpbusd(V acc, V x, V w) { return _mm512_dpbusd_epi32(acc, x, w); }
// acc + the two int16 products of each lane (pmaddwd and the add in one instruction).
FUSEFUZZ_Q8_VNNI_TARGET inline V Dpwssd(V acc, V x, V w) { return _mm512_dpwssd_epi32(acc, x, w); }
#endif

// memcpy for the short rows of small planes (masked moves in the AVX-512 copy: no call).
inline void CopyBytes(uint8_t* d, const uint8_t* s, int64_t n) {
#if defined(__AVX512BW__)
  for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_storeu_si512(d, _mm512_loadu_si512(s));
  if (n > 0) {
    const __mmask64 k = (uint64_t{1} << n) - 1;
    _mm512_mask_storeu_epi8(d, k, _mm512_maskz_loadu_epi8(k, s));
  }
#else
  std::memcpy(d, s, static_cast<size_t>(n));
#endif
}

// Whether this CPU runs the VNNI instructions (checked once per call site's first use).
bool CpuHasVnni();
// Whether this CPU runs vpermb (AVX512_VBMI); FUSEFUZZ_INT8_NO_VBMI=1 says no (its test).
bool CpuHasVbmi();

// The requantization of the header (qconv.h) over n lanes of int32 accumulators: acc + offset,
// times multiplier, plus the residual term, rounded, offset by the zero point, clamped, stored
// as bytes. n may be anything; a partial vector goes through a lane buffer.
struct Requant {
  int32_t offset = 0;
  float multiplier = 1;
  const uint8_t* residual = nullptr;  // n bytes, or null
  bool residual_signed = false;
  int32_t residual_zero_point = 0;
  float residual_multiplier = 0;
  int32_t y_zero_point = 0;
  float lo = 0, hi = 0;  // y_min - y_zero_point, y_max - y_zero_point as float
};
void RequantRow(const Requant& r, const int32_t* acc, int64_t n, uint8_t* y);

// One vector of RequantRow, from registers: kLanes outputs at y (residual at res, or null).
inline void RequantStore(const Requant& r, V acc, const uint8_t* res, uint8_t* y) {
  F v = Mul(ToFloat(Add(acc, Set1(r.offset))), SetF(r.multiplier));
  if (res) {
    const V d = Sub(Load8(res, r.residual_signed), Set1(r.residual_zero_point));
    v = AddF(v, Mul(ToFloat(d), SetF(r.residual_multiplier)));
  }
  // Clamping v to [lo, hi] (integers) before rounding equals rounding then clamping, and maps
  // NaN to lo (max returns its second operand for NaN) as the loops' fmax/fmin clamp does.
  Store8(y, Add(Round(MinF(MaxF(v, SetF(r.lo)), SetF(r.hi))), Set1(r.y_zero_point)));
}
// RequantRow, or with y32 (QConvProblem::y_int32) acc + offset stored as int32.
void EmitRow(const Requant& r, const int32_t* acc, int64_t n, uint8_t* y, int32_t* y32);
// The requantization fields of p as one channel's Requant (offset: `offset`).
Requant RequantOf(const int8::QConvProblem& p, int64_t channel, int32_t offset);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
