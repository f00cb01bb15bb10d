// Depthwise conv without transposes for the AVX2 / AVX-512 copies (docs/kernels.md,
// "Convolution"): stride 1, dilation 1, "same" padding, 3x3 (5x5 too for rows). Two kernels:
//
// - Registers (3x3, planes of at most 64 floats whose row shifts stay within a vector, e.g.
//   MobileNetV2's 7x7): the plane is loaded flat (row-major, zero past its end) into V <= 4
//   vectors. Tap (i, j) of output q reads input q + (i - 1) W + (j - 1). The column shift is done
//   once per j: L_j = the plane shifted by j - 1 lanes, zeroed where the input column leaves the
//   row. The row shift (i - 1) W keeps the column, so tap (i, j) is L_j shifted by (i - 1) W
//   lanes with zeros shifted in: one two-vector permute, no loads, no transposes (the
//   channel-blocked path spends about half its time on 7x7 planes moving data between NCHW and
//   its blocked buffer). A task is a batch of planes: no per-plane setup.
// - Rows (rows at least a vector wide): an output row is chunks of a vector (the last one
//   starting at W - vec, overlapping the one before it); tap (i, j) of a chunk is one masked
//   load (the columns outside the row masked off) of input row oy + i - P at offset j - P, one
//   FMA. A block of G rows x S chunks accumulates in registers, and each loaded input vector
//   feeds the up to K output rows that use it, so a load serves K FMAs.
//
// Per element both compute the same sum as the other depthwise paths: bias, then the taps in
// (i, j) order, one FMA each (a padding tap adds w * 0, as in the blocked path).
#include "kernels/fast/conv_depthwise_small.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/fast/conv_depthwise_blocked.h"  // PositionFree

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define FUSEFUZZ_DW_SMALL 1
#endif

namespace fusefuzz::fast::FUSEFUZZ_ISA {

#ifndef FUSEFUZZ_DW_SMALL

bool DepthwiseSmall(const ConvGeometry&, const float*, const float*, const float*, const Epilogue&,
                    int, float*) {
  return false;
}

#else

namespace {

#if defined(__AVX512F__)
constexpr int kVec = 16;
using Vec = __m512;
using Keep = __mmask16;  // lanes kept by a shift
// Lane l of Pair(lo, hi) is lane l + r of the 32-lane concatenation (lo, hi), r in [1, 16).
struct Shift {
  __m512i idx;
};
inline Shift MakeShift(int r) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return {_mm512_add_epi32(lane, _mm512_set1_epi32(r))};
}
inline Vec Pair(Vec lo, Vec hi, const Shift& s) { return _mm512_permutex2var_ps(lo, s.idx, hi); }
inline Keep MakeKeep(const bool* on) {
  unsigned m = 0;
  for (int l = 0; l < kVec; ++l) m |= on[l] ? 1u << l : 0u;
  return static_cast<Keep>(m);
}
inline Vec PairKeep(Vec lo, Vec hi, const Shift& s, Keep k) {
  return _mm512_maskz_permutex2var_ps(k, lo, s.idx, hi);
}
inline __mmask16 First(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
inline Vec Zero() { return _mm512_setzero_ps(); }
inline Vec Splat(float v) { return _mm512_set1_ps(v); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
// max(0, x) returns x when x is NaN, -0 for -0: exactly x < 0 ? 0 : x. (The maskz form: GCC 12
// warns about the undefined vector inside _mm512_max_ps once inlined here.)
inline Vec Relu(Vec v) { return _mm512_maskz_max_ps(0xFFFF, Zero(), v); }
inline Vec Load(const float* p) { return _mm512_loadu_ps(p); }
inline Vec LoadFirst(const float* p, int n) { return _mm512_maskz_loadu_ps(First(n), p); }
inline void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline void StoreFirst(float* p, Vec v, int n) { _mm512_mask_storeu_ps(p, First(n), v); }
inline Vec LoadKeep(const float* p, Keep k) { return _mm512_maskz_loadu_ps(k, p); }
#else
constexpr int kVec = 8;
using Vec = __m256;
using Keep = __m256;  // all-ones lanes are kept
// As above with 8 lanes: both inputs permuted, then the lanes past lo's end taken from hi.
struct Shift {
  __m256i idx;
  __m256 from_hi;
};
inline __m256i Lanes() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
inline Shift MakeShift(int r) {
  const __m256i at = _mm256_add_epi32(Lanes(), _mm256_set1_epi32(r));
  return {_mm256_and_si256(at, _mm256_set1_epi32(7)),
          _mm256_castsi256_ps(_mm256_cmpgt_epi32(at, _mm256_set1_epi32(7)))};
}
inline Vec Pair(Vec lo, Vec hi, const Shift& s) {
  return _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, s.idx), _mm256_permutevar8x32_ps(hi, s.idx),
                          s.from_hi);
}
inline Keep MakeKeep(const bool* on) {
  alignas(32) int32_t m[kVec];
  for (int l = 0; l < kVec; ++l) m[l] = on[l] ? -1 : 0;
  return _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m)));
}
inline Vec PairKeep(Vec lo, Vec hi, const Shift& s, Keep k) {
  return _mm256_and_ps(Pair(lo, hi, s), k);
}
inline __m256i First(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), Lanes()); }
inline Vec Zero() { return _mm256_setzero_ps(); }
inline Vec Splat(float v) { return _mm256_set1_ps(v); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec Relu(Vec v) { return _mm256_max_ps(Zero(), v); }  // as above
inline Vec Load(const float* p) { return _mm256_loadu_ps(p); }
inline Vec LoadFirst(const float* p, int n) { return _mm256_maskload_ps(p, First(n)); }
inline void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline void StoreFirst(float* p, Vec v, int n) { _mm256_maskstore_ps(p, First(n), v); }
inline Vec LoadKeep(const float* p, Keep k) {
  return _mm256_maskload_ps(p, _mm256_castps_si256(k));
}
#endif

constexpr int kMaxVecs = 64 / kVec;  // planes of at most 64 floats

// Per call: the shifts and the column masks of the geometry.
struct Layout {
  int last = 0;            // floats of the plane in its last vector, in [1, kVec]
  Shift col[3];            // by j - 1 lanes (j != 1)
  Shift row[3];            // by (i - 1) * W lanes (i != 1)
  Keep keep[3][kMaxVecs];  // L_j's lanes whose input column is in the row
};

// A shift by s lanes, |s| < kVec, s != 0: negative ones take (v - 1, v), positive (v, v + 1).
Shift ShiftBy(int64_t s) { return MakeShift(static_cast<int>(s < 0 ? kVec + s : s)); }

// One output plane o from input plane xin, weights w (K * K), bias b. With `whole`, the last
// vector is stored whole too: its lanes past the plane land in the next planes of the same task,
// which are stored after it (the caller checks that they exist).
template <int K, int V, bool kRelu>
[[gnu::always_inline]] inline void Plane(const Layout& lay, const float* xin, const float* w,
                                         float b, bool whole, float* o) {
  constexpr int P = (K - 1) / 2;
  Vec x[V];
  for (int v = 0; v < V; ++v) {
    x[v] = v + 1 < V ? Load(xin + v * kVec) : LoadFirst(xin + v * kVec, lay.last);
  }
  Vec l[K][V];
  for (int j = 0; j < K; ++j) {
    for (int v = 0; v < V; ++v) {
      if (j == P) {
        l[j][v] = x[v];
      } else if (j < P) {
        l[j][v] = PairKeep(v > 0 ? x[v - 1] : Zero(), x[v], lay.col[j], lay.keep[j][v]);
      } else {
        l[j][v] = PairKeep(x[v], v + 1 < V ? x[v + 1] : Zero(), lay.col[j], lay.keep[j][v]);
      }
    }
  }
  Vec acc[V];
  for (int v = 0; v < V; ++v) acc[v] = Splat(b);
  for (int i = 0; i < K; ++i) {
    for (int j = 0; j < K; ++j) {
      const Vec wt = Splat(w[i * K + j]);
      for (int v = 0; v < V; ++v) {
        Vec t;
        if (i == P) {
          t = l[j][v];
        } else if (i < P) {
          t = Pair(v > 0 ? l[j][v - 1] : Zero(), l[j][v], lay.row[i]);
        } else {
          t = Pair(l[j][v], v + 1 < V ? l[j][v + 1] : Zero(), lay.row[i]);
        }
        acc[v] = Fma(wt, t, acc[v]);
      }
    }
  }
  for (int v = 0; v < V; ++v) {
    if (kRelu) acc[v] = Relu(acc[v]);
    if (v + 1 < V || whole) {
      Store(o + v * kVec, acc[v]);
    } else {
      StoreFirst(o + v * kVec, acc[v], lay.last);
    }
  }
}

// One call's operands and constants.
struct Job {
  Layout lay;
  int64_t hw, c, m, mult;
  const float* x;
  const float* w;
  const float* bias;
  float* out;
  const Epilogue* per_plane;  // applied to each plane when not null
};

// Planes [first, last) of the output (plane = n * M + m).
template <int K, int V, bool kRelu>
void Planes(const Job& job, int64_t first, int64_t last) {
  // A local copy: the stores through `o` could alias the job as far as the compiler knows, which
  // would reload the shifts and masks for every plane.
  const Layout lay = job.lay;
  const int64_t hw = job.hw, c = job.c, m_count = job.m, mult = job.mult;
  const float* const x = job.x;
  const float* const w = job.w;
  const float* const bias = job.bias;
  float* const out = job.out;
  const Epilogue* const per_plane = job.per_plane;
  for (int64_t pl = first; pl < last; ++pl) {
    const int64_t n = pl / m_count, m = pl % m_count;
    float* o = out + pl * hw;
    Plane<K, V, kRelu>(lay, x + (n * c + m / mult) * hw, w + m * K * K, bias ? bias[m] : 0.0f,
                       (last - pl) * hw >= V * kVec, o);
    if (per_plane) per_plane->Apply(n, m, 0, hw, o);
  }
}

using PlanesFn = void (*)(const Job&, int64_t, int64_t);

template <bool kRelu, int... V>
PlanesFn Pick(int vecs, std::integer_sequence<int, V...>) {
  PlanesFn f = nullptr;
  ((vecs == V + 1 ? f = &Planes<3, V + 1, kRelu> : f), ...);
  return f;
}

PlanesFn PickPlanes(int vecs, bool relu) {
  const auto all = std::make_integer_sequence<int, kMaxVecs>{};
  return relu ? Pick<true>(vecs, all) : Pick<false>(vecs, all);
}

// ---- Rows: W >= kVec, any plane size ----------------------------------------------------------

constexpr int kMaxChunks = kVec == 16 ? 4 : 2;  // chunks in flight per row

struct KeepSlot {  // a vector type would lose its alignment as a std::vector element
  Keep k;
};

struct RowJob {
  int64_t h = 0, w = 0, hw = 0, c = 0, m = 0, mult = 0, chunks = 0;
  const int64_t* start;  // [chunks] first column of each chunk
  const KeepSlot* keep;  // [chunks * K]: lanes of chunk s whose column + j - P is in the row
  const float* x;
  const float* w_;
  const float* bias;
  float* out;
  const Epilogue* per_plane;
};

// Rows [oy0, oy0 + G) x chunks [s0, s0 + S) of one plane; a row outside the plane reads as zero.
template <int K, int S, int G, bool kRelu>
[[gnu::always_inline]] inline void RowBlock(const RowJob& job, const float* xin, const float* w,
                                            Vec b, int64_t oy0, int64_t s0, float* o) {
  constexpr int P = (K - 1) / 2;
  const int64_t wd = job.w, h = job.h;
  // Tap (i, j) of row g, chunk s reads cb[s] + ro[g + i] + j (cb, ro as integers: masked lanes
  // may lie outside the tensor).
  uintptr_t cb[S];
  int64_t start[S];
  Keep keep[S][K];
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) {
    start[s] = job.start[s0 + s];
    cb[s] = reinterpret_cast<uintptr_t>(xin) + static_cast<uintptr_t>((start[s] - P) * 4);
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) keep[s][j] = job.keep[(s0 + s) * K + j].k;
  }
  int64_t ro[G + K - 1];
  bool in[G + K - 1];
  bool all_in = true;
#pragma GCC unroll 16
  for (int t = 0; t < G + K - 1; ++t) {
    const int64_t r = oy0 + t - P;
    ro[t] = r * wd * 4;
    in[t] = r >= 0 && r < h;
    all_in &= in[t];
  }
  Vec wv[K * K];
#pragma GCC unroll 32
  for (int t = 0; t < K * K; ++t) wv[t] = Splat(w[t]);
  Vec acc[G][S];
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[g][s] = b;
  }
  // Input row t (of the block's G + K - 1) feeds output rows g = t - i, i in [0, K): each load
  // serves up to K rows. Per output row the taps still come in (i, j) order: i = t - g grows
  // with t, j is the inner loop.
  auto taps = [&](auto interior) {
#pragma GCC unroll 16
    for (int t = 0; t < G + K - 1; ++t) {
#pragma GCC unroll 16
      for (int j = 0; j < K; ++j) {
#pragma GCC unroll 16
        for (int s = 0; s < S; ++s) {
          const float* p =
              reinterpret_cast<const float*>(cb[s] + static_cast<uintptr_t>(ro[t] + j * 4));
          const Vec v = interior || in[t] ? LoadKeep(p, keep[s][j]) : Zero();
#pragma GCC unroll 16
          for (int g = 0; g < G; ++g) {
            const int i = t - g;
            if (i >= 0 && i < K) acc[g][s] = Fma(wv[i * K + j], v, acc[g][s]);
          }
        }
      }
    }
  };
  if (all_in) {
    taps(std::true_type{});
  } else {
    taps(std::false_type{});
  }
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) {
      if (kRelu) acc[g][s] = Relu(acc[g][s]);
      Store(o + (oy0 + g) * wd + start[s], acc[g][s]);
    }
  }
}

// Rows in flight: as many independent accumulators (kRows x kMaxChunks) as fit in the registers
// beside the K * K weight vectors and a loaded vector (AVX-512: 32, AVX2: 16).
constexpr int kRows = 4;

// Rows [oy, oy + G), every chunk.
template <int K, int G, bool kRelu>
[[gnu::always_inline]] inline void RowBlocks(const RowJob& job, const float* xin, const float* w,
                                             Vec b, int64_t oy, float* o) {
  for (int64_t s0 = 0; s0 < job.chunks; s0 += kMaxChunks) {
    switch (std::min<int64_t>(kMaxChunks, job.chunks - s0)) {
      case 1:
        RowBlock<K, 1, G, kRelu>(job, xin, w, b, oy, s0, o);
        break;
      case 2:
        RowBlock<K, 2, G, kRelu>(job, xin, w, b, oy, s0, o);
        break;
      case 3:
        RowBlock<K, 3, G, kRelu>(job, xin, w, b, oy, s0, o);
        break;
      default:
        RowBlock<K, 4, G, kRelu>(job, xin, w, b, oy, s0, o);
        break;
    }
  }
}

template <int K, bool kRelu>
void RowPlanes(const RowJob& job, int64_t first, int64_t last) {
  const int64_t hw = job.hw, h = job.h;
  for (int64_t pl = first; pl < last; ++pl) {
    const int64_t n = pl / job.m, m = pl % job.m;
    const float* xin = job.x + (n * job.c + m / job.mult) * hw;
    const float* w = job.w_ + m * K * K;
    const Vec b = Splat(job.bias ? job.bias[m] : 0.0f);
    float* o = job.out + pl * hw;
    // Row blocks outer, chunks inner: the plane is read and written in order (column strips
    // over all rows measured 10-20% slower at AVX2 on N8 56x56, whose planes come from memory).
    int64_t oy = 0;
    for (; oy + kRows <= h; oy += kRows) RowBlocks<K, kRows, kRelu>(job, xin, w, b, oy, o);
    for (; oy < h; ++oy) RowBlocks<K, 1, kRelu>(job, xin, w, b, oy, o);
    if (job.per_plane) job.per_plane->Apply(n, m, 0, hw, o);
  }
}

}  // namespace

bool DepthwiseSmall(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                    const Epilogue& epilogue, int threads, float* out) {
  const ConvAttrs& a = g.a;
  const int64_t k = g.kh, pad = (k - 1) / 2, hw = g.h * g.w;
  if (g.kw != k || (k != 3 && k != 5) || a.stride_h != 1 || a.stride_w != 1 || a.dilation_h != 1 ||
      a.dilation_w != 1 || a.pad_top != pad || a.pad_left != pad || g.oh != g.h || g.ow != g.w ||
      hw <= 0 || g.c <= 0 || g.m % g.c != 0) {
    return false;
  }
  const auto& ops = epilogue.ops();
  const bool relu_only =
      ops.size() == 1 && ops[0].kind == EpilogueKind::kActivation && ops[0].act.op == Op::Relu;
  const bool batch_epilogue = !epilogue.empty() && !relu_only && PositionFree(epilogue);
  const Epilogue* per_plane = epilogue.empty() || relu_only || batch_epilogue ? nullptr : &epilogue;
  const int64_t planes = g.n * g.m;
  // Batches of about 4K output elements: fixed by the geometry, not by the thread count.
  const int64_t batch = std::max<int64_t>(1, 4096 / hw);
  auto run = [&](auto&& planes_of) {
    ParallelFor(threads, (planes + batch - 1) / batch, [&](int64_t task) {
      const int64_t first = task * batch, last = std::min(planes, first + batch);
      planes_of(first, last);
      // Position-free steps: one call over the batch (n, m only matter to the other kinds).
      if (batch_epilogue) {
        epilogue.Apply(first / g.m, first % g.m, 0, (last - first) * hw, out + first * hw);
      }
    });
  };
  // Measured against the blocked path (AVX-512) and the plane loops (AVX2), docs/kernels.md:
  // the registers win on 7x7 3x3 planes (5x5 there: no better than blocked), rows on rows of a
  // vector or more (narrower rows leave lanes idle: blocked/flat stay ahead there).
  if (k == 3 && hw <= kVec * kMaxVecs && g.w < kVec) {
    const int vecs = static_cast<int>((hw + kVec - 1) / kVec);
    Job job;
    Layout& lay = job.lay;
    lay.last = static_cast<int>(hw - (vecs - 1) * kVec);
    for (int j = 0; j < 3; j += 2) {
      lay.col[j] = ShiftBy(j - 1);
      lay.row[j] = ShiftBy((j - 1) * g.w);
      for (int v = 0; v < vecs; ++v) {
        bool on[kVec];
        for (int l = 0; l < kVec; ++l) {
          const int64_t p = v * kVec + l, ix = p % g.w + j - 1;
          on[l] = p < hw && ix >= 0 && ix < g.w;
        }
        lay.keep[j][v] = MakeKeep(on);
      }
    }
    job.hw = hw, job.c = g.c, job.m = g.m, job.mult = g.m / g.c;
    job.x = x, job.w = w, job.bias = bias, job.out = out, job.per_plane = per_plane;
    const PlanesFn planes_fn = PickPlanes(vecs, relu_only);
    run([&](int64_t first, int64_t last) { planes_fn(job, first, last); });
    return true;
  }
  if (g.w < kVec) return false;
  RowJob job;
  job.h = g.h, job.w = g.w, job.hw = hw, job.c = g.c, job.m = g.m, job.mult = g.m / g.c;
  job.chunks = (g.w + kVec - 1) / kVec;
  std::vector<int64_t> start;
  std::vector<KeepSlot> keep;
  for (int64_t s = 0; s < job.chunks; ++s) {
    start.push_back(std::min(s * kVec, g.w - kVec));
    for (int64_t j = 0; j < k; ++j) {
      bool on[kVec];
      for (int l = 0; l < kVec; ++l) {
        const int64_t col = start.back() + l + j - pad;
        on[l] = col >= 0 && col < g.w;
      }
      keep.push_back({MakeKeep(on)});
    }
  }
  job.start = start.data(), job.keep = keep.data();
  job.x = x, job.w_ = w, job.bias = bias, job.out = out, job.per_plane = per_plane;
  auto* fn = k == 3 ? (relu_only ? &RowPlanes<3, true> : &RowPlanes<3, false>)
                    : (relu_only ? &RowPlanes<5, true> : &RowPlanes<5, false>);
  run([&](int64_t first, int64_t last) { fn(job, first, last); });
  return true;
}

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
