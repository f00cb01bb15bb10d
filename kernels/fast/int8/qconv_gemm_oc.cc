// Integer convolution with the output channels across the vector lanes (AVX-512 copy, VNNI
// CPUs, stride 1; docs/kernels.md, "Int8"). qconv_gemm.cc puts 16 output positions in a vector
// and broadcasts the weights; on a padded grid its vectors also cover the junk columns and,
// rounded to whole vectors, positions past the plane: 64 lanes for ResNet-18 conv5_x's 49
// outputs, 224 for conv4_x's 196. Here a tile is 32 output channels (two vectors of the oc-tile
// words, QPacked::w as [group][mtile][nk][32]) times 14 or 7 consecutive positions of one output
// row, each position's input word broadcast: ResNet-18's rows (56, 28, 14, 7) are whole chunks,
// so no junk is computed, and vpdpbusd needs no more registers than 2 x 14 accumulators, the 2
// weight vectors and the broadcast. The accumulators start at the channel's offset; the
// epilogue requantizes per lane (the channel's multiplier) and turns the [position][channel]
// bytes into [channel][position] rows by a 16 x 16 byte transpose (vpermt2b).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qgemm_input.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

#if defined(__AVX512BW__)
namespace {

using int8::QConvProblem;
using int8::QStorage;

#define FUSEFUZZ_Q8_OC_TARGET __attribute__((target("avx512vnni,avx512vbmi")))

constexpr int kOcv = 2;  // vectors of output channels per tile
constexpr int kNp = 14;  // positions per tile (7 for a row's last 1..7)

// The positions a row of ow outputs is computed at: chunks of 14, the last of 7 when 7 do.
int64_t RowSpan(int64_t ow) {
  const int64_t rest = ow % kNp;
  return ow - rest + (rest == 0 ? 0 : rest <= kNp / 2 ? kNp / 2 : kNp);
}

// A 16 x 16 byte matrix, row r at bytes 16 r (four rows per vector), transposed in place.
// Output vector k holds columns 4k .. 4k + 3: byte 16 i + r = M[r][4k + i], from rows r < 8
// (vectors 0, 1) by one vpermt2b and rows r >= 8 (vectors 2, 3) by another, then blended.
FUSEFUZZ_Q8_OC_TARGET void TransposeBytes16(uint8_t* m) {
  alignas(64) static const auto kIdx = [] {
    struct Tables {
      uint8_t b[4][64];
    } t{};
    for (int k = 0; k < 4; ++k) {
      for (int i = 0; i < 4; ++i) {
        for (int r = 0; r < 16; ++r) {
          const int rr = r % 8;
          t.b[k][16 * i + r] = static_cast<uint8_t>(rr / 4 * 64 + rr % 4 * 16 + 4 * k + i);
        }
      }
    }
    return t;
  }();
  constexpr __mmask64 kHigh = 0xFF00FF00FF00FF00ull;  // bytes 16 i + r with r >= 8
  const V in[4] = {Load(m), Load(m + 64), Load(m + 128), Load(m + 192)};
  for (int k = 0; k < 4; ++k) {
    const V idx = _mm512_load_si512(kIdx.b[k]);
    const V lo = _mm512_permutex2var_epi8(in[0], idx, in[1]);
    const V hi = _mm512_permutex2var_epi8(in[2], idx, in[3]);
    Store(m + 64 * k, _mm512_mask_blend_epi8(kHigh, lo, hi));
  }
}

// A 16 x 16 int32 matrix, row i in r[i], transposed in place: 32-bit and 64-bit unpacks leave
// u[4 g + c] lane L = column 4 L + c of rows 4 g .. 4 g + 3; two rounds of 128-bit lane
// shuffles then gather column 4 L + c's four lanes.
inline void TransposeInt32x16(V r[16]) {
  V u[16];
  for (int g = 0; g < 4; ++g) {
    const V* x = r + 4 * g;
    const V t0 = _mm512_unpacklo_epi32(x[0], x[1]), t1 = _mm512_unpackhi_epi32(x[0], x[1]);
    const V t2 = _mm512_unpacklo_epi32(x[2], x[3]), t3 = _mm512_unpackhi_epi32(x[2], x[3]);
    u[4 * g + 0] = _mm512_unpacklo_epi64(t0, t2), u[4 * g + 1] = _mm512_unpackhi_epi64(t0, t2);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t1, t3), u[4 * g + 3] = _mm512_unpackhi_epi64(t1, t3);
  }
  for (int c = 0; c < 4; ++c) {
    const V a = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44);
    const V b = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44);
    const V e = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
    const V d = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
    r[c] = _mm512_shuffle_i32x4(a, b, 0x88), r[4 + c] = _mm512_shuffle_i32x4(a, b, 0xDD);
    r[8 + c] = _mm512_shuffle_i32x4(e, d, 0x88), r[12 + c] = _mm512_shuffle_i32x4(e, d, 0xDD);
  }
}

// What a tile writes: oc rows [oc0, oc0 + n_oc) of the output plane set, positions
// [at, at + n_pos) of each (NCHW: channel oc at y + oc * opix).
struct TileOut {
  int64_t oc0 = 0, n_oc = 0, at = 0, n_pos = 0;
};

// Per-call epilogue values; the multipliers and offsets indexed by output channel (padded to
// whole tiles: the pad lanes compute junk that is not stored).
struct OcCall {
  const int32_t* offset = nullptr;    // [mtiles * 32] of the group
  const float* multiplier = nullptr;  // idem; null for y_int32
  uint8_t* y = nullptr;               // the image and group's first channel plane
  int32_t* y32 = nullptr;
  const uint8_t* residual = nullptr;
  int64_t opix = 0;
  bool residual_signed = false;
  int32_t residual_zero_point = 0, y_zero_point = 0;
  float residual_multiplier = 0, lo = 0, hi = 0;
};

// The epilogue of one tile (acc with the offset in): RequantStore's operations per lane, each
// lane its channel's multiplier.
template <int NP>
FUSEFUZZ_Q8_OC_TARGET void Finish(const OcCall& c, const TileOut& t, V acc[kOcv][NP]) {
  alignas(64) uint8_t m[256];
  for (int v = 0; v < kOcv; ++v) {
    const int64_t oc0 = t.oc0 + 16 * v, n_oc = std::min<int64_t>(16, t.n_oc - 16 * v);
    if (n_oc <= 0) return;
    if (c.y32) {  // the int32 rows: the [position][channel] tile transposed in registers
      V r[16];
      for (int j = 0; j < 16; ++j) r[j] = j < NP ? acc[v][j] : Zero();
      TransposeInt32x16(r);
      const __mmask16 k = static_cast<__mmask16>((1u << t.n_pos) - 1);
      for (int64_t l = 0; l < n_oc; ++l) {
        _mm512_mask_storeu_epi32(c.y32 + (oc0 + l) * c.opix + t.at, k, r[l]);
      }
      continue;
    }
    const __mmask16 pos = static_cast<__mmask16>((1u << t.n_pos) - 1);
    if (c.residual) {  // the residual's [channel][position] rows to [position][channel]
      std::memset(m, 0, sizeof m);
      for (int64_t l = 0; l < n_oc; ++l) {
        _mm_store_si128(reinterpret_cast<__m128i*>(m + 16 * l),
                        _mm_maskz_loadu_epi8(pos, c.residual + (oc0 + l) * c.opix + t.at));
      }
      TransposeBytes16(m);
    }
    const F mult = _mm512_loadu_ps(c.multiplier + 16 * v);  // the tile's own, from its first
    for (int j = 0; j < NP; ++j) {
      F x = Mul(ToFloat(acc[v][j]), mult);
      if (c.residual) {
        const __m128i rb = _mm_load_si128(reinterpret_cast<const __m128i*>(m + 16 * j));
        const V r = c.residual_signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
        x = AddF(x, Mul(ToFloat(Sub(r, Set1(c.residual_zero_point))), SetF(c.residual_multiplier)));
      }
      const V q = Add(Round(MinF(MaxF(x, SetF(c.lo)), SetF(c.hi))), Set1(c.y_zero_point));
      _mm_store_si128(reinterpret_cast<__m128i*>(m + 16 * j), _mm512_cvtepi32_epi8(q));
    }
    for (int j = NP; j < 16; ++j)
      _mm_store_si128(reinterpret_cast<__m128i*>(m + 16 * j), _mm_setzero_si128());
    TransposeBytes16(m);
    for (int64_t l = 0; l < n_oc; ++l) {
      _mm_mask_storeu_epi8(c.y + (oc0 + l) * c.opix + t.at, pos,
                           _mm_load_si128(reinterpret_cast<const __m128i*>(m + 16 * l)));
    }
  }
}

// One tile: NP positions from x (position j's word k at x[koff[k] + j]) times the 32 channels
// of w ([nk][32] words), accumulated from off.
template <int NP>
FUSEFUZZ_Q8_OC_TARGET void Tile(const int32_t* x, const int64_t* koff, int64_t nk, const int32_t* w,
                                const V off[kOcv], const OcCall& c, const TileOut& t) {
  V acc[kOcv][NP];
#pragma GCC unroll 14
  for (int j = 0; j < NP; ++j) acc[0][j] = off[0], acc[1][j] = off[1];
  for (int64_t k = 0; k < nk; ++k) {
    const int32_t* xp = x + koff[k];
    const V w0 = Load(w + k * 32), w1 = Load(w + k * 32 + 16);
#pragma GCC unroll 14
    for (int j = 0; j < NP; ++j) {
      const V b = Set1(xp[j]);
      acc[0][j] = Dpbusd(acc[0][j], b, w0);
      acc[1][j] = Dpbusd(acc[1][j], b, w1);
    }
  }
  // A copy to pass: were acc's address taken, GCC would keep it in memory through the loop.
  V out[kOcv][NP];
#pragma GCC unroll 14
  for (int j = 0; j < NP; ++j) out[0][j] = acc[0][j], out[1][j] = acc[1][j];
  Finish<NP>(c, t, out);
}

}  // namespace

bool UseOcTiles(const QConvProblem& p, bool vnni) {
  if (!vnni || !CpuHasVbmi() || p.stride_h != 1 || p.stride_w != 1) return false;
  const int64_t mg = p.m / p.group;
  const gemm::Geometry geo = gemm::GeometryOf(p);
  // Lanes computed, each kernel's way: qconv_gemm.cc's positions (whole vectors) times its
  // 8-channel tiles; here the rows' chunks times 32-channel tiles.
  const int64_t gemm_lanes = geo.qp * ((mg + 7) / 8 * 8);
  const int64_t oc_lanes = p.oh * RowSpan(p.ow) * ((mg + 31) / 32 * 32);
  return oc_lanes < gemm_lanes;
}

void RunOcTiles(const QPacked& pk, const QConvProblem& p, int threads) {
  const int64_t mg = p.m / p.group, opix = p.oh * p.ow, span = RowSpan(p.ow);
  gemm::Geometry geo = gemm::GeometryOf(p);
  // The chunks of the last row read up to span positions past its start, plus the taps.
  geo.plane = std::max(geo.plane, (p.oh - 1) * geo.wp + span + (p.kh - 1) * p.dilation_h * geo.wp +
                                      (p.kw - 1) * p.dilation_w);
  gemm::WordFormat f;
  f.vnni = true;
  f.is_signed = p.x_type == QStorage::kInt8;
  f.zx = p.x_zero_point;
  f.pad = (static_cast<uint32_t>(p.x_zero_point + (f.is_signed ? 128 : 0)) & 0xFFu) * 0x01010101u;
  const int64_t padded = pk.mtiles * 32;  // a group's channels, whole tiles
  std::vector<int32_t> off(static_cast<size_t>(padded));
  std::vector<float> mult(static_cast<size_t>(padded));
  std::vector<int32_t> buf;
  std::vector<int64_t> koff;
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t g = 0; g < p.group; ++g) {
      gemm::PackInput(pk, p, geo, b, g, f, buf, koff);
      for (int64_t m = 0; m < padded; ++m) {
        const int64_t oc = g * mg + std::min(m, mg - 1);
        off[static_cast<size_t>(m)] = pk.offset[static_cast<size_t>(oc)];
        mult[static_cast<size_t>(m)] = p.y_int32 ? 1.0f : p.multiplier[oc];
      }
      OcCall c;
      c.offset = off.data(), c.multiplier = mult.data(), c.opix = opix;
      const int64_t base = (b * p.m + g * mg) * opix;
      c.y = p.y_int32 ? nullptr : p.y + base;
      c.y32 = p.y_int32 ? p.y_int32 + base : nullptr;
      c.residual = p.residual && !p.y_int32 ? p.residual + base : nullptr;
      c.residual_signed = p.residual_type == QStorage::kInt8;
      c.residual_zero_point = p.residual_zero_point, c.residual_multiplier = p.residual_multiplier;
      c.y_zero_point = p.y_zero_point;
      c.lo = static_cast<float>(p.y_min - p.y_zero_point);
      c.hi = static_cast<float>(p.y_max - p.y_zero_point);
      // Tasks: (channel tile, output row), channel-tile major, so a thread's consecutive tasks
      // reuse the tile's weights from its cache.
      ParallelFor(threads, pk.mtiles * p.oh, [&](int64_t task) {
        const int64_t mt = task / p.oh, oy = task % p.oh;
        const int32_t* wt = pk.w.data() + (g * pk.mtiles + mt) * pk.nk * 32;
        const V o[kOcv] = {Load(c.offset + mt * 32), Load(c.offset + mt * 32 + 16)};
        OcCall cm = c;
        cm.multiplier = c.multiplier + mt * 32;
        TileOut t;
        t.oc0 = mt * 32, t.n_oc = std::min<int64_t>(32, mg - mt * 32);
        for (int64_t ox = 0; ox < p.ow; ox += kNp) {
          const int32_t* x = buf.data() + oy * geo.wp + ox;
          t.at = oy * p.ow + ox, t.n_pos = std::min<int64_t>(kNp, p.ow - ox);
          if (t.n_pos <= kNp / 2) {
            Tile<kNp / 2>(x, koff.data(), pk.nk, wt, o, cm, t);
          } else {
            Tile<kNp>(x, koff.data(), pk.nk, wt, o, cm, t);
          }
        }
      });
    }
  }
}

#else  // the SSE2 and AVX2 copies: no VNNI

bool UseOcTiles(const int8::QConvProblem&, bool) { return false; }
void RunOcTiles(const QPacked&, const int8::QConvProblem&, int) {}

#endif

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
