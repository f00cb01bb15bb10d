// Packed-panel conv for the AVX2 and AVX-512 copies (docs/kernels.md, "Convolution").
//
// Per image and group the output is the row-major product W_g [Mg, K] x col [K, P] (as in
// conv.cc), computed without Eigen:
// - A task owns a block of kBlockP output positions. Its im2col is written, kKc reduction rows
//   at a time, straight into sub-panels of kNR positions laid out [k][kNR], the order in which
//   the micro-kernel reads it (nothing is packed twice).
// - The micro-kernel keeps an MR x kNR tile of the output in registers (kMR output channels x
//   kNV vectors of positions), loads kNV vectors of the panel per k and broadcasts each
//   channel's weight straight from the weight rows (the weights are never repacked).
// - Between reduction chunks the tile goes through the output itself; after the last chunk the
//   bias is added in registers, the tile stored, and the epilogue runs on its rows (in L1).
// Every output element is the same float sum whatever the block it falls in and whatever thread
// computes it (per chunk of kKc reduction rows an FMA chain from zero in k order, the chunks
// added in order, then + bias): bit-identical for any thread count.
#include "kernels/fast/conv_packed.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define FUSEFUZZ_PACKED_CONV 1
#endif

namespace fusefuzz::fast::FUSEFUZZ_ISA {

#ifndef FUSEFUZZ_PACKED_CONV

bool HavePackedConv() { return false; }
void PackedConv(const ConvGeometry&, const float*, const float*, const float*, const Epilogue&, int,
                float*) {}

#else

bool HavePackedConv() { return true; }

namespace {

#if defined(__AVX512F__)
// 8 channels x 3 vectors = 24 accumulators of 32 zmm registers.
constexpr int kVec = 16, kMR = 8, kNV = 3;
using Vec = __m512;
inline Vec Zero() { return _mm512_setzero_ps(); }
inline Vec Splat(float v) { return _mm512_set1_ps(v); }
inline Vec Load(const float* p) { return _mm512_loadu_ps(p); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
inline Vec LoadFirst(const float* p, int n) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline void StoreFirst(float* p, Vec v, int n) {
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
}
#else
// 6 channels x 2 vectors = 12 accumulators of 16 ymm registers.
constexpr int kVec = 8, kMR = 6, kNV = 2;
using Vec = __m256;
inline Vec Zero() { return _mm256_setzero_ps(); }
inline Vec Splat(float v) { return _mm256_set1_ps(v); }
inline Vec Load(const float* p) { return _mm256_loadu_ps(p); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
inline __m256i FirstLanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec LoadFirst(const float* p, int n) { return _mm256_maskload_ps(p, FirstLanes(n)); }
inline void StoreFirst(float* p, Vec v, int n) { _mm256_maskstore_ps(p, FirstLanes(n), v); }
#endif

constexpr int64_t kNR = kNV * kVec;  // positions per sub-panel
// Reduction rows per chunk. Each chunk is summed from zero in registers, then added to the
// running total: a long reduction (K = 4608 at ResNet-18's conv5_x) is not one rounding chain of
// K additions but chains of at most 128 plus one of K/128 (the error of a sequential float sum
// grows with its length; as one chain, ResNet-18 went past the oracle's bound).
constexpr int64_t kKc = 128;
constexpr int64_t kBlockP = 4 * kNR;  // positions per task
constexpr int64_t kTaskRows = 64;     // output channels per task when column tasks are too few

// out[MR x (NV * kVec)] (+)= W[MR x kc] * B[kc x NV * kVec]; `last` lanes of the last vector
// are real (1..kVec). B row k: packed, b + k * NV * kVec; Direct, b + off[k] (a shifted window
// of the zero-bordered input). `accumulate`: add the sum to the tile in `c` (earlier chunks);
// `bias`: added after the last chunk, else nullptr.
template <int MR, int NV, bool Direct>
void Tile(const float* w, int64_t ldw, const float* b, const int64_t* off, int64_t kc, float* c,
          int64_t ldc, int last, bool accumulate, const float* bias) {
  Vec acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) acc[i][v] = Zero();
  }
  const float* wr[MR];
  for (int i = 0; i < MR; ++i) wr[i] = w + i * ldw;
  for (int64_t k = 0; k < kc; ++k) {
    const float* bk = Direct ? b + off[k] : b + k * (NV * kVec);
    Vec bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = Load(bk + v * kVec);
    for (int i = 0; i < MR; ++i) {
      const Vec a = Splat(wr[i][k]);
      for (int v = 0; v < NV; ++v) acc[i][v] = Fma(a, bv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    const Vec bi = bias ? Splat(bias[i]) : Zero();
    for (int v = 0; v < NV; ++v) {
      float* dst = c + i * ldc + v * kVec;
      Vec r = acc[i][v];
      if (accumulate) r = Add(v + 1 < NV ? Load(dst) : LoadFirst(dst, last), r);
      if (bias) r = Add(r, bi);
      if (v + 1 < NV) {
        Store(dst, r);
      } else {
        StoreFirst(dst, r, last);
      }
    }
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, const int64_t*, int64_t, float*,
                        int64_t, int, bool, const float*);

template <bool Direct, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> MakeTiles(std::index_sequence<I...>) {
  return {&Tile<static_cast<int>(I / kNV) + 1, static_cast<int>(I % kNV) + 1, Direct>...};
}
// k*Tiles[(mr - 1) * kNV + nv - 1]: every tail shape of rows and vectors.
constexpr auto kPackedTiles = MakeTiles<false>(std::make_index_sequence<kMR * kNV>{});
constexpr auto kDirectTiles = MakeTiles<true>(std::make_index_sequence<kMR * kNV>{});

// One im2col row (reduction index c, i, j) over output positions [p, p + n) into dst[0, n);
// zeros where the tap falls in the padding.
void FillRow(const ConvGeometry& g, const float* xc, int64_t yoff, int64_t xoff, Range rx,
             int64_t p, int64_t n, float* dst) {
  int64_t oy = p / g.ow, ox0 = p % g.ow;
  const int64_t sw = g.a.stride_w;
  for (int64_t q = 0; q < n; ox0 = 0, ++oy) {
    const int64_t cnt = std::min(g.ow - ox0, n - q);  // positions left in this output row
    float* o = dst + q - ox0;                         // o[ox] for ox in [ox0, ox0 + cnt)
    const int64_t iy = oy * g.a.stride_h + yoff;
    if (iy < 0 || iy >= g.h) {
      std::fill(o + ox0, o + ox0 + cnt, 0.0f);
    } else {
      const float* xrow = xc + iy * g.w + xoff;
      const int64_t lo = std::clamp(rx.lo, ox0, ox0 + cnt);
      const int64_t hi = std::clamp(rx.hi, lo, ox0 + cnt);
      for (int64_t ox = ox0; ox < lo; ++ox) o[ox] = 0.0f;
      if (sw == 1) {
        for (int64_t ox = lo; ox < hi; ++ox) o[ox] = xrow[ox];
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) o[ox] = xrow[ox * sw];
      }
      for (int64_t ox = hi; ox < ox0 + cnt; ++ox) o[ox] = 0.0f;
    }
    q += cnt;
  }
}

struct PackedConvRun {
  const ConvGeometry& g;
  const float* x;
  const float* w;
  const float* bias;
  const Epilogue& epilogue;
  float* out;

  // Reduction rows [k0, k0 + kc) of positions [p0, p0 + cols) of image plane group xg into the
  // sub-panels at `panel`: sub-panel s at panel + s * kc * kNR, rows of its width rounded up to
  // whole vectors (the extra lanes zero).
  void Pack(const float* xg, int64_t k0, int64_t kc, int64_t p0, int64_t cols, float* panel) const {
    const ConvAttrs& a = g.a;
    for (int64_t k = k0; k < k0 + kc; ++k) {
      const int64_t c = k / (g.kh * g.kw), i = k / g.kw % g.kh, j = k % g.kw;
      const int64_t yoff = i * a.dilation_h - a.pad_top, xoff = j * a.dilation_w - a.pad_left;
      const Range rx = ValidRange(g.ow, g.w, a.stride_w, xoff);
      const float* xc = xg + c * g.h * g.w;
      for (int64_t s = 0; s * kNR < cols; ++s) {
        const int64_t ws = std::min(kNR, cols - s * kNR);
        const int64_t ld = (ws + kVec - 1) / kVec * kVec;
        float* dst = panel + s * kc * kNR + (k - k0) * ld;
        FillRow(g, xc, yoff, xoff, rx, p0 + s * kNR, ws, dst);
        std::fill(dst + ws, dst + ld, 0.0f);
      }
    }
  }

  // Image n, group gi, positions [p0, p0 + cols), the group's output channels [r0, r1).
  void Run(int64_t n, int64_t gi, int64_t p0, int64_t cols, int64_t r0, int64_t r1) const {
    const int64_t k = g.k(), plane = g.p();
    const float* xg = x + (n * g.c + gi * g.cg()) * g.h * g.w;
    thread_local std::vector<float> panel;
    panel.resize(static_cast<size_t>(std::min(kKc, k) * kBlockP));
    for (int64_t k0 = 0; k0 < k; k0 += kKc) {
      const int64_t kc = std::min(kKc, k - k0);
      const bool last_chunk = k0 + kc == k;
      Pack(xg, k0, kc, p0, cols, panel.data());
      for (int64_t r = r0; r < r1; r += kMR) {
        const int64_t mr = std::min<int64_t>(kMR, r1 - r), m = gi * g.mg() + r;
        const float* wm = w + m * k + k0;
        for (int64_t s = 0; s * kNR < cols; ++s) {
          const int64_t ws = std::min(kNR, cols - s * kNR);
          const int64_t nv = (ws + kVec - 1) / kVec;
          const int last = static_cast<int>(ws - (nv - 1) * kVec);
          float* c = out + (n * g.m + m) * plane + p0 + s * kNR;
          const float* b = last_chunk && bias ? bias + m : nullptr;
          kPackedTiles[static_cast<size_t>((mr - 1) * kNV + nv - 1)](
              wm, k, panel.data() + s * kc * kNR, nullptr, kc, c, plane, last, k0 > 0, b);
          if (last_chunk && !epilogue.empty()) {
            for (int64_t i = 0; i < mr; ++i) {
              const int64_t q = p0 + s * kNR;
              epilogue.Apply(n, m + i, q, q + ws, c + i * plane);
            }
          }
        }
      }
    }
    if (panel.capacity() > (size_t{1} << 22)) panel = {};  // keep no huge buffer around
  }
};

// Stride 1: no im2col. Each input plane is copied once into a zero-bordered plane of hp x wp
// (as conv_depthwise.cc does); on that padded grid the output position q = oy * wp + ox reads
// tap (c, i, j) at q + off[k], off[k] = c * hp * wp + i * dh * wp + j * dw: B row k is a window
// of the padded input, loaded in place. The grid's wp - ow columns past each output row are
// computed and dropped (a tile goes through a buffer on the stack, then its real columns to
// the output).
struct DirectLayout {
  int64_t hp = 0, wp = 0, plane = 0;  // plane == 0: not applicable
  int64_t grid = 0;                   // grid positions up to the last output: (oh-1)*wp + ow
  std::vector<int64_t> off;           // [K]
};

DirectLayout MakeDirectLayout(const ConvGeometry& g) {
  DirectLayout d;
  const ConvAttrs& a = g.a;
  if (a.stride_h != 1 || a.stride_w != 1 || g.oh <= 0 || g.ow <= 0) return d;
  const int64_t hp = g.oh + (g.kh - 1) * a.dilation_h, wp = g.ow + (g.kw - 1) * a.dilation_w;
  if (hp * wp > 4 * g.h * g.w + 4096) return d;  // hostile pads or dilations: im2col instead
  d.hp = hp, d.wp = wp, d.plane = hp * wp, d.grid = (g.oh - 1) * wp + g.ow;
  for (int64_t c = 0; c < g.cg(); ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        d.off.push_back(c * d.plane + i * a.dilation_h * wp + j * a.dilation_w);
      }
    }
  }
  return d;
}

// Padded plane of input plane xin: row r holds input row r - pad_top, column c input column
// c - pad_left, zeros elsewhere.
void PadPlane(const ConvGeometry& g, const DirectLayout& d, const float* xin, float* xp) {
  const int64_t c0 = std::min(d.wp, g.a.pad_left), c1 = std::min(d.wp, g.w + g.a.pad_left);
  for (int64_t r = 0; r < d.hp; ++r) {
    float* row = xp + r * d.wp;
    const int64_t iy = r - g.a.pad_top;
    if (iy < 0 || iy >= g.h) {
      std::fill(row, row + d.wp, 0.0f);
      continue;
    }
    std::fill(row, row + c0, 0.0f);
    std::copy(xin + iy * g.w, xin + iy * g.w + (c1 - c0), row + c0);
    std::fill(row + c1, row + d.wp, 0.0f);
  }
}

struct DirectConvRun {
  const ConvGeometry& g;
  const DirectLayout& d;
  const float* xpad;  // all N * C padded planes
  const float* w;
  const float* bias;
  const Epilogue& epilogue;
  float* out;

  // Output positions before grid position q.
  int64_t Before(int64_t q) const { return q / d.wp * g.ow + std::min(q % d.wp, g.ow); }

  // Image n, group gi, grid positions [q0, q0 + qn), the group's output channels [r0, r1).
  void Run(int64_t n, int64_t gi, int64_t q0, int64_t qn, int64_t r0, int64_t r1) const {
    const int64_t k = g.k(), plane = g.p();
    const float* base = xpad + (n * g.c + gi * g.cg()) * d.plane;
    alignas(64) float tile[kMR * kNR];
    for (int64_t r = r0; r < r1; r += kMR) {
      const int64_t mr = std::min<int64_t>(kMR, r1 - r), m = gi * g.mg() + r;
      float* om = out + (n * g.m + m) * plane;
      for (int64_t s = 0; s * kNR < qn; ++s) {
        const int64_t q = q0 + s * kNR, ws = std::min(kNR, qn - s * kNR);
        const int64_t nv = (ws + kVec - 1) / kVec;
        for (int64_t k0 = 0; k0 < k; k0 += kKc) {
          const int64_t kc = std::min(kKc, k - k0);
          kDirectTiles[static_cast<size_t>((mr - 1) * kNV + nv - 1)](
              w + m * k + k0, k, base + q, d.off.data() + k0, kc, tile, kNR, kVec, k0 > 0,
              k0 + kc == k && bias ? bias + m : nullptr);
        }
        // The real columns of each grid row segment to the output.
        for (int64_t e = q; e < q + ws;) {
          const int64_t ox = e % d.wp, len = std::min(d.wp - ox, q + ws - e);
          const int64_t real = std::max<int64_t>(0, std::min(g.ow - ox, len));
          const int64_t p = e / d.wp * g.ow + ox;
          for (int64_t i = 0; i < mr; ++i) {
            std::copy_n(tile + i * kNR + (e - q), real, om + i * plane + p);
          }
          e += len;
        }
      }
      if (!epilogue.empty()) {
        const int64_t p0 = Before(q0), p1 = Before(q0 + qn);
        for (int64_t i = 0; i < mr; ++i) epilogue.Apply(n, m + i, p0, p1, om + i * plane + p0);
      }
    }
  }
};

// Tasks over (image, group, position block) and, when those are fewer than the threads, fixed
// ranges of output channels too; `run(n, gi, begin, count, r0, r1)`.
template <typename F>
void ForBlocks(const ConvGeometry& g, int64_t positions, int threads, const F& run) {
  const int64_t pbs = (positions + kBlockP - 1) / kBlockP;
  const int64_t column_tasks = g.n * g.a.group * pbs;
  // Each row-split task packs its own copy of the same panel; the arithmetic is unchanged.
  const int64_t row_blocks = column_tasks >= threads ? 1 : (g.mg() + kTaskRows - 1) / kTaskRows;
  ParallelFor(threads, column_tasks * row_blocks, [&](int64_t t) {
    const int64_t ct = t / row_blocks, rb = t % row_blocks;
    const int64_t n = ct / (g.a.group * pbs), gi = ct / pbs % g.a.group, pb = ct % pbs;
    const int64_t p0 = pb * kBlockP, cols = std::min(kBlockP, positions - p0);
    const int64_t r0 = row_blocks == 1 ? 0 : rb * kTaskRows;
    const int64_t r1 = row_blocks == 1 ? g.mg() : std::min(g.mg(), r0 + kTaskRows);
    run(n, gi, p0, cols, r0, r1);
  });
}

}  // namespace

void PackedConv(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                const Epilogue& epilogue, int threads, float* out) {
  const DirectLayout d = MakeDirectLayout(g);
  if (d.plane > 0) {
    // Per calling thread, reused across calls (the tail: the last tile's loads run past the
    // last plane by less than a tile).
    thread_local std::vector<float> xpad;
    const int64_t planes = g.n * g.c;
    xpad.resize(static_cast<size_t>(planes * d.plane + kNR));
    std::fill(xpad.end() - kNR, xpad.end(), 0.0f);
    // (A thread_local names the running thread's own copy: hand the workers the pointer.)
    float* const xp = xpad.data();
    ParallelFor(threads, planes,
                [&](int64_t i) { PadPlane(g, d, x + i * g.h * g.w, xp + i * d.plane); });
    const DirectConvRun run{g, d, xp, w, bias, epilogue, out};
    ForBlocks(g, d.grid, threads,
              [&](int64_t n, int64_t gi, int64_t q0, int64_t qn, int64_t r0, int64_t r1) {
                run.Run(n, gi, q0, qn, r0, r1);
              });
    if (xpad.capacity() > (size_t{1} << 24)) xpad = {};  // keep no huge buffer around
    return;
  }
  const PackedConvRun run{g, x, w, bias, epilogue, out};
  ForBlocks(g, g.p(), threads,
            [&](int64_t n, int64_t gi, int64_t p0, int64_t cols, int64_t r0, int64_t r1) {
              run.Run(n, gi, p0, cols, r0, r1);
            });
}

#endif  // FUSEFUZZ_PACKED_CONV

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
