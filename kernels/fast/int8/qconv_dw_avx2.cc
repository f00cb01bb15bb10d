// The depthwise kernel of the AVX2 copy (docs/kernels.md, "Int8", depthwise): dilation 1, any
// kernel size, stride_w up to 4. Each input plane is copied once into a zero-point-bordered byte
// plane (one per stride_w column phase), then into a plane of *pair words*: word k holds bytes k
// and k + 1 of its phase as two int16. Two taps of a kernel row that are adjacent in one phase
// (kx and kx + stride_w) then read one word, so one `vpmaddwd` against the word
// (w[ky][kx], w[ky][kx + sw]) does both taps for 8 outputs, exactly (|x| <= 255, |w| <= 128:
// each pair sum is at most 65280 in magnitude; no int16 saturation as with vpmaddubsw). A tap
// without a partner uses (w, 0). A 3x3 kernel is 6 multiply-adds per 8 outputs instead of 9, and
// the word plane is read straight from memory. Outputs are rows of 8-lane vectors (7-wide rows
// waste one lane, where a flattened grid would need a compaction per plane), four at a time for
// four independent chains, requantized in registers and stored straight to the NCHW row: the
// lanes past a row's end land in the next row, which is stored after; only a plane's last vector
// goes through a lane buffer. Raw bytes are multiplied (int8 sign-extended), and
// offset = bias - zx * sum(w) (QPacked::offset) undoes the zero point.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
#if defined(__AVX2__) && !defined(__AVX512BW__)
namespace {

using int8::QConvProblem;
using int8::QStorage;

constexpr int kVecs = 4;       // independent accumulator chains per step
constexpr int kMaxPairs = 64;  // pair words per output channel handled here (7x7 stride 1: 28)

// One multiply-add of the kernel: the pair word at `off` (words from the vector's base) of
// phase `phase`, taps t0 and t1 (t1 < 0: a single tap, weight 0 in the high half).
struct Pair {
  int64_t phase = 0, off = 0, t0 = 0, t1 = -1;
};

// The thread's buffers, grown as needed and kept: no allocation per task.
struct Buffers {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> words;
};
Buffers& ThreadBuffers() {
  thread_local Buffers b;
  return b;
}

// Short row copies without a libc call and without reading past the row: overlapping 8- or
// 4-byte moves.
inline void CopyRow(uint8_t* d, const uint8_t* s, int64_t n) {
  if (n >= 8) {
    for (int64_t i = 0; i + 8 < n; i += 8) std::memcpy(d + i, s + i, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

// At most 8 bytes (a vector's lanes), as CopyRow.
inline void CopyLanes(uint8_t* d, const uint8_t* s, int64_t n) {
  if (n == 8) {
    std::memcpy(d, s, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

// Pair words of n bytes (n a multiple of 8; bytes readable to b[n]): word k = (b[k], b[k + 1]).
template <bool kSigned>
void PairWords(const uint8_t* b, int64_t n, int32_t* w) {
  auto widen = [](__m128i u) {
    return kSigned ? _mm256_cvtepi8_epi16(u) : _mm256_cvtepu8_epi16(u);
  };
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k + 1));
    Store(w + k, widen(_mm_unpacklo_epi8(lo, hi)));
    Store(w + k + 8, widen(_mm_unpackhi_epi8(lo, hi)));
  }
  if (k < n) {
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + k));
    const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + k + 1));
    Store(w + k, widen(_mm_unpacklo_epi8(lo, hi)));
  }
}

// The output plane's shape, by value (the kernels keep it in registers: a pointer to the
// problem would be reloaded after every store, which could alias it).
struct Plane {
  int64_t nv = 0;     // vectors per output row
  int64_t rstep = 0;  // words from one output row's inputs to the next: stride_h * wq
  int64_t ow = 0, opix = 0;
};

// Stores one vector's outputs (bytes, or int32 with y32) at index yi of the plane, whole
// vectors where the overrun stays inside the plane (the next vector's to write, stored after
// it), else n lanes through a lane buffer.
inline void Emit(const Plane& g, const Requant& r, V acc, int64_t yi, int64_t n, uint8_t* y,
                 int32_t* y32, const uint8_t* res) {
  if (yi + kLanes <= g.opix) {
    if (y32) return Store(y32 + yi, Add(acc, Set1(r.offset)));
    return RequantStore(r, acc, res ? res + yi : nullptr, y + yi);
  }
  const size_t rest = static_cast<size_t>(n);
  if (y32) {
    alignas(32) int32_t out[kLanes];
    Store(out, Add(acc, Set1(r.offset)));
    std::memcpy(y32 + yi, out, rest * sizeof(int32_t));
    return;
  }
  alignas(32) uint8_t rb[kLanes] = {}, yb[kLanes];
  if (res) std::memcpy(rb, res + yi, rest);
  RequantStore(r, acc, res ? rb : nullptr, yb);
  std::memcpy(y + yi, yb, rest);
}

// What a channel's vectors are stored as: bytes, bytes with a residual, or int32 (y_int32).
enum class Out : uint8_t { kBytes, kResidual, kInt32 };

// The requantization's constants as vectors, once per channel (RequantStore's operations in
// its order; the offset is where the accumulator starts, which is the same int32 sum).
struct Consts {
  F mul, lo, hi, rmul;
  V zy, rz;
  bool rsigned, ysigned;
  explicit Consts(const Requant& r, bool y_signed)
      : mul(SetF(r.multiplier)),
        lo(SetF(r.lo)),
        hi(SetF(r.hi)),
        rmul(SetF(r.residual_multiplier)),
        zy(Set1(r.y_zero_point)),
        rz(Set1(r.residual_zero_point)),
        rsigned(r.residual_signed),
        ysigned(y_signed) {}
};

template <Out kOut>
inline V Requantize(const Consts& k, V acc, const uint8_t* res) {
  F v = Mul(ToFloat(acc), k.mul);
  if (kOut == Out::kResidual) {
    v = AddF(v, Mul(ToFloat(Sub(Load8(res, k.rsigned), k.rz)), k.rmul));
  }
  return Add(Round(MinF(MaxF(v, k.lo), k.hi)), k.zy);
}

// One output channel, kVecs vectors per step, walked in order (vector v: row v / nv, columns
// from (v % nv) * 8). When the count is not a multiple of kVecs the last step is the plane's
// last kVecs vectors again: the vectors it repeats get the same values, and each vector's
// overrun is still overwritten by the next one, stored after it. A step's 4 vectors are packed
// to bytes together (exact: the values are already within the output type, so the saturating
// packs keep them) and stored as one 32-byte store where they are consecutive, else as four
// 8-byte stores in order; the plane's last step goes through Emit (no overrun past the plane).
// The pair pointers and weights are copied to locals so that a fixed NP keeps them in
// registers. r.offset is the accumulators' start (acc + offset: the same int32 sum).
template <int NP, Out kOut>
__attribute__((noinline)) void Channel(const Plane g, const int32_t* const* srcs, const V* wvs,
                                       int np, const Requant& r, const Consts& k, uint8_t* y,
                                       int32_t* y32, const uint8_t* res) {
  constexpr int kMax = NP ? NP : kMaxPairs;
  const int n = NP ? NP : np;
  const int32_t* src[kMax];
  V w[kMax];
  for (int j = 0; j < n; ++j) src[j] = srcs[j], w[j] = wvs[j];
  const V off = Set1(r.offset);
  const int64_t nvec = g.opix / g.ow * g.nv, rowv = g.nv * kLanes;
  Requant r0 = r;  // Emit's view: the accumulators passed to it start at 0
  r0.offset = 0;
  if (nvec < kVecs) {  // at most 3 vectors: each through Emit
    int64_t ox = 0, brow = 0, yrow = 0;
    for (int64_t v = 0; v < nvec; ++v) {
      V acc = off;
      for (int j = 0; j < n; ++j) acc = MAdd(acc, Load(src[j] + brow + ox), w[j]);
      Emit(g, r0, acc, yrow + ox, std::min<int64_t>(kLanes, g.ow - ox), y, y32, res);
      ox += kLanes;
      if (ox == rowv) ox = 0, brow += g.rstep, yrow += g.ow;
    }
    return;
  }
  int64_t ox = 0, brow = 0, yrow = 0;  // the next vector's column, word row and output row
  for (int64_t v = 0;; v += kVecs) {
    if (v > nvec - kVecs) {  // the overlapping last step: its first vector's place
      v = nvec - kVecs;
      const int64_t oy = v / g.nv;
      ox = (v % g.nv) * kLanes, brow = oy * g.rstep, yrow = oy * g.ow;
    }
    int64_t base[kVecs], yi[kVecs];
    _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
      base[i] = brow + ox;
      yi[i] = yrow + ox;
      ox += kLanes;
      if (ox == rowv) ox = 0, brow += g.rstep, yrow += g.ow;
    }
    V acc[kVecs];
    _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) acc[i] = off;
    _Pragma("GCC unroll 8") for (int j = 0; j < n; ++j) {
      _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
        acc[i] = MAdd(acc[i], Load(src[j] + base[i]), w[j]);
        // Keeps the chain acc + product in order: reassociated into a tree of products, the
        // 24 products of a step no longer fit the 16 registers and are spilled.
        asm("" : "+x"(acc[i]));
      }
    }
    const bool last = v + kVecs == nvec;
    // Vectors that reach past the plane (its last ones; with rows narrower than 8 outputs
    // also those of earlier steps): their residual comes through a lane buffer and they are
    // stored in part (the plane's lanes), still in order.
    const bool tail = yi[kVecs - 1] + kLanes > g.opix;
    if (kOut == Out::kInt32) {
      _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
        if (!tail || yi[i] + kLanes <= g.opix) {
          Store(y32 + yi[i], acc[i]);
          continue;
        }
        alignas(32) int32_t out[kLanes];
        Store(out, acc[i]);
        std::memcpy(y32 + yi[i], out, static_cast<size_t>(g.opix - yi[i]) * sizeof(int32_t));
      }
    } else {
      const uint8_t* rp[kVecs] = {};
      alignas(16) uint8_t rb[kVecs][kLanes] = {};
      if (kOut == Out::kResidual) {
        _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
          rp[i] = res + yi[i];
          if (tail && yi[i] + kLanes > g.opix) {
            CopyLanes(rb[i], rp[i], g.opix - yi[i]);
            rp[i] = rb[i];
          }
        }
      }
      V q[kVecs];
      _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
        q[i] = Requantize<kOut>(k, acc[i], rp[i]);
      }
      // Words: [q0 0-3, q1 0-3 | q0 4-7, q1 4-7]; bytes: dword i of each half is q_i's 4.
      const V ab = _mm256_packs_epi32(q[0], q[1]), cd = _mm256_packs_epi32(q[2], q[3]);
      const V b8 = k.ysigned ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
      const V o = _mm256_permutevar8x32_epi32(b8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      if (tail) {
        alignas(32) uint8_t out[kVecs * kLanes];
        Store(out, o);
        _Pragma("GCC unroll 4") for (int i = 0; i < kVecs; ++i) {
          CopyLanes(y + yi[i], out + i * kLanes, std::min<int64_t>(kLanes, g.opix - yi[i]));
        }
      } else if (yi[3] == yi[0] + 3 * kLanes) {
        Store(y + yi[0], o);
      } else {
        const __m128i o01 = _mm256_castsi256_si128(o), o23 = _mm256_extracti128_si256(o, 1);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(y + yi[0]), o01);
        _mm_storeh_pd(reinterpret_cast<double*>(y + yi[1]), _mm_castsi128_pd(o01));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(y + yi[2]), o23);
        _mm_storeh_pd(reinterpret_cast<double*>(y + yi[3]), _mm_castsi128_pd(o23));
      }
    }
    if (last) break;
  }
}

// Channel with the output kind as a template argument.
template <int NP>
void ChannelOf(Out out, const Plane g, const int32_t* const* srcs, const V* wvs, int np,
               const Requant& r, const Consts& k, uint8_t* y, int32_t* y32, const uint8_t* res) {
  switch (out) {
    case Out::kBytes:
      Channel<NP, Out::kBytes>(g, srcs, wvs, np, r, k, y, y32, res);
      break;
    case Out::kResidual:
      Channel<NP, Out::kResidual>(g, srcs, wvs, np, r, k, y, y32, res);
      break;
    case Out::kInt32:
      Channel<NP, Out::kInt32>(g, srcs, wvs, np, r, k, y, y32, res);
      break;
  }
}

// What a task needs of the problem, by value (see Plane).
struct Task {
  Plane g;
  const Pair* pairs = nullptr;
  int np = 0;
  int64_t wq = 0, words = 0, bytes = 0, sw = 1;
  int64_t q0[4] = {}, q1[4] = {}, y0 = 0, y1 = 0;
  int64_t pad_top = 0, pad_left = 0, iw = 0, ich = 0, mg = 1, taps = 1;
  uint8_t pad = 0;
  bool is_signed = false, y_signed = false;
};

// Channel ci's rows into byte plane `plane` (its border already holds the pad value).
void CopyRows(const Task& t, const uint8_t* in, uint8_t* plane) {
  const int64_t wq = t.wq, iw = t.iw, sw = t.sw, pad_left = t.pad_left;
  const int64_t y0 = t.y0, y1 = t.y1, top = t.pad_top, bytes = t.bytes;
  for (int64_t ph = 0; ph < sw; ++ph) {
    const int64_t a0 = t.q0[ph], n = t.q1[ph] - a0;
    uint8_t* row = plane + ph * bytes + y0 * wq + a0;
    const uint8_t* irow = in + (y0 - top) * iw;
    if (sw > 1) {
      for (int64_t yy = y0; yy < y1; ++yy, row += wq, irow += iw) {
        for (int64_t q = 0; q < n; ++q) row[q] = irow[(q + a0) * sw + ph - pad_left];
      }
      continue;
    }
    irow += a0 - pad_left;
    if (n >= 32) {  // whole 32-byte moves, the last one overlapping: no read past the row
      for (int64_t yy = y0; yy < y1; ++yy, row += wq, irow += iw) {
        for (int64_t i = 0; i + 32 < n; i += 32) Store(row + i, Load(irow + i));
        Store(row + n - 32, Load(irow + n - 32));
      }
    } else if (n >= 4 && n <= 8) {  // the 7x7 planes' rows: two overlapping 4-byte moves
      for (int64_t yy = y0; yy < y1; ++yy, row += wq, irow += iw) {
        uint32_t a, b;
        std::memcpy(&a, irow, 4);
        std::memcpy(&b, irow + n - 4, 4);
        std::memcpy(row, &a, 4);
        std::memcpy(row + n - 4, &b, 4);
      }
    } else {
      for (int64_t yy = y0; yy < y1; ++yy, row += wq, irow += iw) CopyRow(row, irow, n);
    }
  }
}

// Input channels [c0, c1) of image b, as a pipeline: channel ci + 2's rows are copied into one
// byte plane, ci + 1's pair words made from the other, and ci computed from the words made one
// channel earlier. So no load reads bytes or words just stored (a load spanning recent narrower
// or misaligned stores cannot take its data from them and waits until they retire).
void RunTask(const Task& t, const QPacked& pk, const QConvProblem& p, int64_t b, int64_t c0,
             int64_t c1) {
  const int64_t sw = t.sw, bytes = t.bytes, words = t.words, np = t.np;
  Buffers& buf = ThreadBuffers();
  uint8_t* planes = Grow(buf.bytes, static_cast<size_t>(2 * sw * bytes));
  int32_t* wplanes = Grow(buf.words, static_cast<size_t>(2 * sw * words));
  std::memset(planes, t.pad, static_cast<size_t>(2 * sw * bytes));
  const uint8_t* x = p.x + b * p.c * t.ich;
  const auto pair_words = t.is_signed ? PairWords<true> : PairWords<false>;
  auto make_words = [&](int64_t ci) {  // byte plane ci % 2 into word plane ci % 2
    for (int64_t ph = 0; ph < sw; ++ph) {
      pair_words(planes + ((ci & 1) * sw + ph) * bytes, words,
                 wplanes + ((ci & 1) * sw + ph) * words);
    }
  };
  CopyRows(t, x + c0 * t.ich, planes);
  if (c0 + 1 < c1) CopyRows(t, x + (c0 + 1) * t.ich, planes + ((c0 + 1) & 1) * sw * bytes);
  make_words(c0);
  const int32_t* src[2][kMaxPairs];
  for (int i = 0; i < np; ++i) {
    for (int k = 0; k < 2; ++k) {
      src[k][i] = wplanes + (k * sw + t.pairs[i].phase) * words + t.pairs[i].off;
    }
  }
  // The pair words of each channel's weights (int16 weights in the low halves of pk.w).
  alignas(32) V wv[kMaxPairs];
  const int64_t ybase0 = b * p.m * t.g.opix;
  for (int64_t ci = c0; ci < c1; ++ci) {
    if (ci + 1 < c1) make_words(ci + 1);  // before ci + 2's copy overwrites its bytes
    if (ci + 2 < c1) CopyRows(t, x + (ci + 2) * t.ich, planes + (ci & 1) * sw * bytes);
    for (int64_t j = 0; j < t.mg; ++j) {
      const int64_t oc = ci * t.mg + j;
      const int32_t* w = pk.w.data() + oc * t.taps;
      for (int i = 0; i < np; ++i) {
        const uint32_t hi = t.pairs[i].t1 < 0 ? 0u : static_cast<uint32_t>(w[t.pairs[i].t1]);
        wv[i] = Set1(static_cast<int32_t>(static_cast<uint32_t>(w[t.pairs[i].t0]) | hi << 16));
      }
      const Requant r = RequantOf(p, oc, pk.offset[static_cast<size_t>(oc)]);
      const int64_t ybase = ybase0 + oc * t.g.opix;
      uint8_t* y = p.y_int32 ? nullptr : p.y + ybase;
      int32_t* y32 = p.y_int32 ? p.y_int32 + ybase : nullptr;
      const uint8_t* res = p.residual && !p.y_int32 ? p.residual + ybase : nullptr;
      const Consts k(r, t.y_signed);
      const Out out = y32 ? Out::kInt32 : res ? Out::kResidual : Out::kBytes;
      const int32_t* const* s = src[ci & 1];
      const int n = static_cast<int>(np);
      if (np == 6) {  // 3x3 at stride 1 or 2
        ChannelOf<6>(out, t.g, s, wv, n, r, k, y, y32, res);
      } else {
        ChannelOf<0>(out, t.g, s, wv, n, r, k, y, y32, res);
      }
    }
  }
}

}  // namespace

bool RunDepthwiseAvx2(const QPacked& pk, const QConvProblem& p, int threads) {
  const int64_t sw = p.stride_w;
  if (p.dilation_h != 1 || p.dilation_w != 1 || sw < 1 || sw > 4) return false;
  // The byte packing saturates to the output type: the clamp bounds must lie within it.
  if (!p.y_int32 && (p.y_min < int8::QMin(p.y_type) || p.y_max > int8::QMax(p.y_type))) {
    return false;
  }
  // The pairs: per kernel row and column phase, that phase's taps kx = ph, ph + sw, ... two at
  // a time (adjacent words of the phase), a last odd one alone.
  Pair pairs[kMaxPairs];
  int np = 0;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    for (int64_t ph = 0; ph < sw && ph < p.kw; ++ph) {
      for (int64_t kx = ph; kx < p.kw; kx += 2 * sw) {
        if (np == kMaxPairs) return false;
        Pair& pr = pairs[np++];
        pr.phase = ph;
        pr.t0 = ky * p.kw + kx;
        pr.t1 = kx + sw < p.kw ? pr.t0 + sw : -1;
        pr.off = ky;  // the kernel row; made a word offset once wq is known
      }
    }
  }
  // A phase row holds every column a vector's lanes read (junk lanes included) and the high
  // byte of the last pair word: nv * 8 + (kw - 1) / sw + 1 columns.
  Task t;
  t.g.nv = (p.ow + kLanes - 1) / kLanes;
  t.g.ow = p.ow;
  t.g.opix = p.oh * p.ow;
  t.wq = t.g.nv * kLanes + (p.kw - 1) / sw + 1;
  t.g.rstep = p.stride_h * t.wq;
  const int64_t hp = (p.oh - 1) * p.stride_h + p.kh;  // padded rows read
  for (int i = 0; i < np; ++i) pairs[i].off = pairs[i].off * t.wq + (pairs[i].t0 % p.kw) / sw;
  t.pairs = pairs;
  t.np = np;
  t.words = (hp * t.wq + kLanes - 1) / kLanes * kLanes;  // per phase
  t.bytes = t.words + 16;                                // PairWords reads byte `words`
  t.pad = static_cast<uint8_t>(p.x_zero_point & 0xFF);
  t.is_signed = p.x_type == QStorage::kInt8;
  t.y_signed = p.y_type == QStorage::kInt8;
  t.sw = sw;
  // Each phase's columns inside the input, [q0, q1), and rows [y0, y1): the rest is border,
  // written once per buffer.
  for (int64_t ph = 0; ph < sw; ++ph) {
    const int64_t first = p.pad_left - ph, last = p.pad_left + p.w - ph;  // q * sw in [f, l)
    t.q0[ph] = std::clamp<int64_t>(first <= 0 ? 0 : (first + sw - 1) / sw, 0, t.wq);
    t.q1[ph] = std::clamp<int64_t>(last <= 0 ? 0 : (last + sw - 1) / sw, t.q0[ph], t.wq);
  }
  t.y0 = std::clamp<int64_t>(p.pad_top, 0, hp);
  t.y1 = std::clamp<int64_t>(p.pad_top + p.h, t.y0, hp);
  t.pad_top = p.pad_top;
  t.pad_left = p.pad_left;
  t.iw = p.w;
  t.ich = p.h * p.w;
  t.mg = p.m / p.group;
  t.taps = p.kh * p.kw;
  constexpr int64_t kChunk = 16;  // input channels per task
  const int64_t chunks = (p.c + kChunk - 1) / kChunk;
  ParallelFor(threads, p.n * chunks, [&](int64_t task) {
    const int64_t b = task / chunks, c0 = (task % chunks) * kChunk;
    RunTask(t, pk, p, b, c0, std::min(p.c, c0 + kChunk));
  });
  return true;
}

#else

bool RunDepthwiseAvx2(const QPacked&, const int8::QConvProblem&, int) { return false; }

#endif
}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
