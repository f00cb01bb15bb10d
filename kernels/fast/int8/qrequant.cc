// The vectorized requantization (the header's scheme, lane by lane) and the quantized Add, in
// every ISA copy. Compiled with -ffp-contract=off (cmake/isa_dispatch.cmake): a fused
// multiply-add of `acc * multiplier + residual term` would round once where the definition
// rounds twice.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qconv.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

bool CpuHasVnni() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // FUSEFUZZ_INT8_NO_VNNI=1: the AVX-512BW pmaddwd path on a VNNI CPU (its test, tests/).
  static const bool has =
      __builtin_cpu_supports("avx512vnni") && !std::getenv("FUSEFUZZ_INT8_NO_VNNI");
  return has;
#else
  return false;
#endif
}

bool CpuHasVbmi() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // FUSEFUZZ_INT8_NO_VBMI=1: the channel-blocked depthwise kernel on a VBMI CPU (tests/).
  static const bool has =
      __builtin_cpu_supports("avx512vbmi") && !std::getenv("FUSEFUZZ_INT8_NO_VBMI");
  return has;
#else
  return false;
#endif
}

namespace {

inline V Finish(F v, F lo, F hi, V zy) { return Add(Round(MinF(MaxF(v, lo), hi)), zy); }

inline void RequantLanes(const Requant& r, const int32_t* acc, const uint8_t* res, uint8_t* y) {
  RequantStore(r, Load(acc), res, y);
}

inline void AddLanes(const int8::QAddProblem& p, const uint8_t* a, const uint8_t* b, uint8_t* y) {
  const bool as = p.a_type == int8::QStorage::kInt8, bs = p.b_type == int8::QStorage::kInt8;
  const F va = Mul(ToFloat(Sub(Load8(a, as), Set1(p.a_zero_point))), SetF(p.a_multiplier));
  const F vb = Mul(ToFloat(Sub(Load8(b, bs), Set1(p.b_zero_point))), SetF(p.b_multiplier));
  const F lo = SetF(static_cast<float>(p.y_min - p.y_zero_point));
  const F hi = SetF(static_cast<float>(p.y_max - p.y_zero_point));
  Store8(y, Finish(AddF(va, vb), lo, hi, Set1(p.y_zero_point)));
}

}  // namespace

void RequantRow(const Requant& r, const int32_t* acc, int64_t n, uint8_t* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    RequantLanes(r, acc + i, r.residual ? r.residual + i : nullptr, y + i);
  }
  if (i == n) return;
#if defined(__AVX512BW__)
  {  // masked loads and store: the lanes past n are neither read nor written
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1);
    F v =
        Mul(ToFloat(Add(_mm512_maskz_loadu_epi32(k, acc + i), Set1(r.offset))), SetF(r.multiplier));
    if (r.residual) {
      const __m128i rb = _mm_maskz_loadu_epi8(k, r.residual + i);
      const V d = Sub(r.residual_signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb),
                      Set1(r.residual_zero_point));
      v = AddF(v, Mul(ToFloat(d), SetF(r.residual_multiplier)));
    }
    const V q = Finish(v, SetF(r.lo), SetF(r.hi), Set1(r.y_zero_point));
    _mm_mask_storeu_epi8(y + i, k, _mm512_cvtepi32_epi8(q));
    return;
  }
#endif
  const size_t rest = static_cast<size_t>(n - i);
  alignas(64) int32_t a[kLanes] = {};
  alignas(64) uint8_t rb[kLanes] = {}, yb[kLanes];
  std::memcpy(a, acc + i, rest * sizeof(int32_t));
  if (r.residual) std::memcpy(rb, r.residual + i, rest);
  RequantLanes(r, a, r.residual ? rb : nullptr, yb);
  std::memcpy(y + i, yb, rest);
}

void EmitRow(const Requant& r, const int32_t* acc, int64_t n, uint8_t* y, int32_t* y32) {
  if (!y32) return RequantRow(r, acc, n, y);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) Store(y32 + i, Add(Load(acc + i), Set1(r.offset)));
  for (; i < n; ++i) {
    y32[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(r.offset));
  }
}

Requant RequantOf(const int8::QConvProblem& p, int64_t channel, int32_t offset) {
  Requant r;
  r.offset = offset;
  r.multiplier = p.y_int32 ? 1.0f : p.multiplier[channel];
  r.residual_signed = p.residual_type == int8::QStorage::kInt8;
  r.residual_zero_point = p.residual_zero_point;
  r.residual_multiplier = p.residual_multiplier;
  r.y_zero_point = p.y_zero_point;
  r.lo = static_cast<float>(p.y_min - p.y_zero_point);
  r.hi = static_cast<float>(p.y_max - p.y_zero_point);
  return r;
}

void QRequantizeKernel(const int8::QConvProblem& p, const int32_t* acc, int threads) {
  if (p.y_min > p.y_max) return int8::QRequantizeLoops(p, acc);
  const int64_t plane = p.oh * p.ow;
  int8::QConvProblem pass = p;
  pass.y_int32 = nullptr;  // the pass's own output is y
  ParallelFor(threads, p.n * p.m, [&](int64_t t) {
    Requant r = RequantOf(pass, t % p.m, 0);
    if (p.residual) r.residual = p.residual + t * plane;
    RequantRow(r, acc + t * plane, plane, p.y + t * plane);
  });
}

void QAddKernel(const int8::QAddProblem& p, int threads) {
  if (p.y_min > p.y_max) return int8::QAddLoops(p);  // the vector clamp assumes lo <= hi
  // Chunks of 16 KiB: enough work per task, results independent of the thread count.
  constexpr int64_t kChunk = 16384;
  ParallelFor(threads, (p.count + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(p.count, begin + kChunk);
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) AddLanes(p, p.a + i, p.b + i, p.y + i);
    if (i == end) return;
    const size_t rest = static_cast<size_t>(end - i);
    alignas(64) uint8_t a[kLanes] = {}, b[kLanes] = {}, y[kLanes];
    std::memcpy(a, p.a + i, rest);
    std::memcpy(b, p.b + i, rest);
    AddLanes(p, a, b, y);
    std::memcpy(p.y + i, y, rest);
  });
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
