// Integer convolution as a register-tiled GEMM over packed input words (docs/kernels.md, "Int8"):
// per (image, group) the input is packed once into int32 words of `cpg` channels at one pixel,
// then each kMr x (NR vectors) tile of (output channel, output pixel) accumulates over
// (channel group, tap) with one multiply-add per word:
//   vpdpbusd (AVX-512 VNNI): words of 4 u8 inputs (int8 inputs + 128) against 4 int8 weights;
//            padding holds the zero point and offset[m] subtracts zero point * sum(w);
//   pmaddwd  (SSE2, AVX2, AVX-512BW): words of 2 int16 (x - x_zero_point, in [-255, 255])
//            against 2 int16 weights; each product is at most 255 * 128 and their pair sum
//            lands in int32, so nothing saturates, whatever the values.
// Stride 1 packs the zero-bordered planes and reads them in place ("direct": output position q on
// a grid as wide as the padded plane, tap (ky, kx) at q + ky*dh*wp + kx*dw, the columns past ow
// computed and dropped); other strides pack im2col words. The accumulators of a tile are
// requantized and stored to NCHW rows straight away (the fused epilogue).
#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"
#include "kernels/fast/int8/qgemm_input.h"
#include "kernels/fast/int8/qkernels.h"
#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {
namespace {

using gemm::Geometry;
using gemm::GeometryOf;
using gemm::PackInput;
using gemm::WordFormat;
using int8::QConvProblem;
using int8::QStorage;

#if defined(__AVX512BW__)
constexpr int kMr = 8;
#else
constexpr int kMr = 4;
#endif
using gemm::kNr;

// A tile's epilogue in registers, where its kMr x NR*kLanes outputs are whole rows segments
// (row i at y + i * stride): the requantization of each row, residual at the same offsets.
struct TileEpi {
  const Requant* rows = nullptr;  // [kMr]
  uint8_t* y = nullptr;
  const uint8_t* residual = nullptr;
  int64_t stride = 0;
};

// The tile: acc[i][v] over nk words; x at the tile's first position, word k of position q at
// x[koff[k] + q]; w the tile's [nk][kMr] words. One body, two multiply-adds: a macro because
// the VNNI copy needs its own target attribute on the whole loop.
#define FUSEFUZZ_Q8_TILE_BODY(MAC)                                                                \
  V acc[kMr][NR];                                                                                 \
  _Pragma("GCC unroll 8") for (int i = 0; i < kMr; ++i)                                           \
      _Pragma("GCC unroll 3") for (int v = 0; v < NR; ++v) acc[i][v] = Zero();                    \
  for (int64_t k = 0; k < nk; ++k) {                                                              \
    const int32_t* xp = x + koff[k];                                                              \
    V xv[NR];                                                                                     \
    _Pragma("GCC unroll 3") for (int v = 0; v < NR; ++v) xv[v] = Load(xp + v * kLanes);           \
    const int32_t* wk = w + k * kMr;                                                              \
    _Pragma("GCC unroll 8") for (int i = 0; i < kMr; ++i) {                                       \
      const V b = Set1(wk[i]);                                                                    \
      _Pragma("GCC unroll 3") for (int v = 0; v < NR; ++v) acc[i][v] = MAC(acc[i][v], xv[v], b);  \
    }                                                                                             \
  }                                                                                               \
  if (epi) {                                                                                      \
    _Pragma("GCC unroll 8") for (int i = 0; i < kMr; ++i) {                                       \
      uint8_t* y = epi->y + i * epi->stride;                                                      \
      const uint8_t* res = epi->residual ? epi->residual + i * epi->stride : nullptr;             \
      _Pragma("GCC unroll 3") for (int v = 0; v < NR; ++v)                                        \
          RequantStore(epi->rows[i], acc[i][v], res ? res + v* kLanes : nullptr, y + v * kLanes); \
    }                                                                                             \
    return;                                                                                       \
  }                                                                                               \
  _Pragma("GCC unroll 8") for (int i = 0; i < kMr; ++i)                                           \
      _Pragma("GCC unroll 3") for (int v = 0; v < NR; ++v)                                        \
          Store(out + (i * NR + v) * kLanes, acc[i][v]);

template <int NR>
void TileMadd(const int32_t* x, const int64_t* koff, int64_t nk, const int32_t* w, int32_t* out,
              const TileEpi* epi) {
  FUSEFUZZ_Q8_TILE_BODY(MAdd)
}

#ifdef FUSEFUZZ_Q8_VNNI
template <int NR>
FUSEFUZZ_Q8_VNNI_TARGET void TileVnni(const int32_t* x, const int64_t* koff, int64_t nk,
                                      const int32_t* w, int32_t* out, const TileEpi* epi) {
  FUSEFUZZ_Q8_TILE_BODY(Dpbusd)
}
#endif
#undef FUSEFUZZ_Q8_TILE_BODY

using TileFn = void (*)(const int32_t*, const int64_t*, int64_t, const int32_t*, int32_t*,
                        const TileEpi*);

TileFn TileFor(bool vnni, int nr) {
#ifdef FUSEFUZZ_Q8_VNNI
  if (vnni) return nr == 1 ? &TileVnni<1> : nr == 2 ? &TileVnni<2> : &TileVnni<3>;
#else
  (void)vnni;
#endif
  return nr == 1 ? &TileMadd<1> : nr == 2 ? &TileMadd<2> : &TileMadd<3>;
}

}  // namespace

QPacked* Pack(const QConvProblem& p) {
  auto* pk = new QPacked;
  pk->m = p.m;
  pk->c = p.c;
  pk->kh = p.kh;
  pk->kw = p.kw;
  pk->group = p.group;
  pk->x_type = p.x_type;
  pk->x_zero_point = p.x_zero_point;
  const int64_t cg = p.c / p.group, mg = p.m / p.group, taps = p.kh * p.kw;
  const bool is_signed = p.x_type == QStorage::kInt8;
  pk->offset.resize(static_cast<size_t>(p.m));
  if (cg == 1) {  // depthwise: raw inputs, the zero point subtracted through offset
    pk->kind = QPacked::Kind::kDepthwise;
    pk->vnni = kLanes == 16 && CpuHasVnni();
    pk->w.resize(static_cast<size_t>(p.m * taps));
    for (int64_t oc = 0; oc < p.m; ++oc) {
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const int32_t wv = p.weights[oc * taps + t];
        sum += wv;
        pk->w[static_cast<size_t>(oc * taps + t)] = static_cast<int32_t>(wv & 0xFFFF);
      }
      const int64_t bias = p.bias ? p.bias[oc] : 0;
      pk->offset[static_cast<size_t>(oc)] =
          static_cast<int32_t>(static_cast<uint32_t>(bias - p.x_zero_point * sum));
    }
    if (kLanes == 16) {  // the channel-blocked words of qconv_dw_channels.cc
      const int64_t blocks = (p.c + 15) / 16;
      pk->wc.assign(static_cast<size_t>(mg * blocks * taps * 16), 0);
      pk->offc.assign(static_cast<size_t>(mg * blocks * 16), 0);
      for (int64_t c = 0; c < p.c; ++c) {
        for (int64_t j = 0; j < mg; ++j) {
          const int64_t oc = c * mg + j, at = j * blocks + c / 16, l = c % 16;
          for (int64_t t = 0; t < taps; ++t) {
            pk->wc[static_cast<size_t>((at * taps + t) * 16 + l)] =
                pk->w[static_cast<size_t>(oc * taps + t)];
          }
          pk->offc[static_cast<size_t>(at * 16 + l)] = pk->offset[static_cast<size_t>(oc)];
        }
      }
    }
    if (kLanes == 16 && pk->vnni && CpuHasVbmi()) {  // the tap-group words of qconv_dw_vbmi.cc
      const int64_t ng = (p.kw + 3) / 4;
      const int64_t zu = p.x_zero_point + (is_signed ? 128 : 0);
      pk->ng = ng;
      pk->wv.assign(static_cast<size_t>(p.m * p.kh * ng), 0);
      pk->offv.resize(static_cast<size_t>(p.m));
      pk->accmax.resize(static_cast<size_t>(p.m));
      for (int64_t oc = 0; oc < p.m; ++oc) {
        int64_t sum = 0, neg = 0, pos = 0;  // the taps' sum over u8 inputs: in [255 neg, 255 pos]
        for (int64_t t = 0; t < taps; ++t) {
          const int32_t wv = p.weights[oc * taps + t];
          sum += wv;
          (wv < 0 ? neg : pos) += wv;
          const int64_t ky = t / p.kw, kx = t % p.kw;
          auto& word = pk->wv[static_cast<size_t>((oc * p.kh + ky) * ng + kx / 4)];
          word = static_cast<int32_t>(static_cast<uint32_t>(word) |
                                      (static_cast<uint32_t>(wv) & 0xFFu) << (8 * (kx % 4)));
        }
        const int64_t bias = p.bias ? p.bias[oc] : 0;
        const int32_t off = static_cast<int32_t>(static_cast<uint32_t>(bias - zu * sum));
        pk->offv[static_cast<size_t>(oc)] = off;
        const int64_t lo = off + 255 * neg, hi = off + 255 * pos;
        pk->accmax[static_cast<size_t>(oc)] =
            lo < INT32_MIN || hi > INT32_MAX ? INT64_MAX : std::max(-lo, hi);
      }
      if (p.kw <= 4) {  // channel-blocked as wc: lane l of block cb is channel cb * 16 + l
        const int64_t blocks = (p.c + 15) / 16;
        pk->wct.assign(static_cast<size_t>(mg * blocks * p.kh * 16), 0);
        pk->offct.assign(static_cast<size_t>(mg * blocks * 16), 0);
        for (int64_t c = 0; c < p.c; ++c) {
          for (int64_t j = 0; j < mg; ++j) {
            const int64_t oc = c * mg + j, at = j * blocks + c / 16, l = c % 16;
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              pk->wct[static_cast<size_t>((at * p.kh + ky) * 16 + l)] =
                  pk->wv[static_cast<size_t>(oc * p.kh + ky)];
            }
            pk->offct[static_cast<size_t>(at * 16 + l)] = pk->offv[static_cast<size_t>(oc)];
          }
        }
      }
    }
    return pk;
  }
  pk->vnni = kLanes == 16 && CpuHasVnni();
  pk->cpg = pk->vnni ? 4 : 2;
  pk->ncg = (cg + pk->cpg - 1) / pk->cpg;
  pk->nk = pk->ncg * taps;
  pk->oc_tiles = UseOcTiles(p, pk->vnni);
  const int64_t mr = pk->oc_tiles ? 32 : kMr;  // channels per tile
  pk->mtiles = (mg + mr - 1) / mr;
  pk->w.assign(static_cast<size_t>(p.group * pk->mtiles * pk->nk * mr), 0);
  // vpdpbusd multiplies u8 inputs: int8 inputs are shifted by 128, so is their zero point.
  const int64_t zu = p.x_zero_point + (is_signed ? 128 : 0);
  for (int64_t oc = 0; oc < p.m; ++oc) {
    const int64_t g = oc / mg, m = oc % mg, mt = m / mr, i = m % mr;
    int32_t* wt = pk->w.data() + ((g * pk->mtiles + mt) * pk->nk) * mr + i;
    int64_t sum = 0;
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int64_t t = 0; t < taps; ++t) {
        const int32_t wv = p.weights[(oc * cg + ci) * taps + t];
        sum += wv;
        const int64_t k = (ci / pk->cpg) * taps + t, j = ci % pk->cpg;
        uint32_t word = static_cast<uint32_t>(wt[k * mr]);
        word |= pk->vnni ? (static_cast<uint32_t>(wv) & 0xFFu) << (8 * j)
                         : (static_cast<uint32_t>(wv) & 0xFFFFu) << (16 * j);
        wt[k * mr] = static_cast<int32_t>(word);
      }
    }
    const int64_t bias = p.bias ? p.bias[oc] : 0;
    pk->offset[static_cast<size_t>(oc)] =
        static_cast<int32_t>(static_cast<uint32_t>(pk->vnni ? bias - zu * sum : bias));
  }
  return pk;
}

void Run(const QPacked& pk, const QConvProblem& p, int threads) {
  if (pk.m != p.m || pk.c != p.c || pk.kh != p.kh || pk.kw != p.kw || pk.group != p.group ||
      pk.x_type != p.x_type || pk.x_zero_point != p.x_zero_point) {
    throw InputError("QConv", "packed weights were made for another convolution geometry");
  }
  if (!p.y_int32 && p.y_min > p.y_max)
    return int8::QConvLoops(p);  // the vector clamp assumes lo <= hi
  if (pk.kind == QPacked::Kind::kDepthwise) return RunDepthwise(pk, p, threads);
  if (pk.oc_tiles) return RunOcTiles(pk, p, threads);
  const int64_t mg = p.m / p.group, opix = p.oh * p.ow;
  const Geometry geo = GeometryOf(p);
  WordFormat f;
  f.vnni = pk.vnni;
  f.is_signed = p.x_type == QStorage::kInt8;
  f.zx = p.x_zero_point;
  if (pk.vnni) {
    const uint32_t zu = static_cast<uint32_t>(p.x_zero_point + (f.is_signed ? 128 : 0)) & 0xFFu;
    f.pad = zu * 0x01010101u;
  }
  constexpr int64_t tile = kNr * kLanes;
  const int64_t ntiles = (geo.qp + tile - 1) / tile;
  std::vector<Requant> reqs(static_cast<size_t>(pk.mtiles * kMr));
  // Output positions map one to one onto the tile's (im2col, or a grid without junk columns):
  // whole tiles requantize in registers straight into y.
  const bool contiguous = !p.y_int32 && (!geo.direct || geo.wp == p.ow);
  std::vector<int32_t> buf;
  std::vector<int64_t> koff;
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t g = 0; g < p.group; ++g) {
      PackInput(pk, p, geo, b, g, f, buf, koff);
      for (int64_t m = 0; m < pk.mtiles * kMr; ++m) {
        const int64_t oc = g * mg + std::min(m, mg - 1);
        reqs[static_cast<size_t>(m)] = RequantOf(p, oc, pk.offset[static_cast<size_t>(oc)]);
      }
      ParallelFor(threads, ntiles, [&](int64_t qt) {
        const int64_t q0 = qt * tile;
        const int nr = qt == ntiles - 1 ? geo.nr_last : kNr;
        const TileFn fn = TileFor(pk.vnni, nr);
        const int64_t q1 = std::min(geo.qv, q0 + nr * kLanes);
        alignas(64) int32_t out[kMr * kNr * kLanes];
        for (int64_t mt = 0; mt < pk.mtiles; ++mt) {
          const int32_t* wt = pk.w.data() + ((g * pk.mtiles + mt) * pk.nk) * kMr;
          const int64_t oc0 = g * mg + mt * kMr;
          if (contiguous && q1 - q0 == nr * kLanes && (mt + 1) * kMr <= mg) {
            TileEpi epi;
            epi.rows = reqs.data() + mt * kMr;
            epi.y = p.y + (b * p.m + oc0) * opix + q0;
            epi.residual = p.residual ? p.residual + (b * p.m + oc0) * opix + q0 : nullptr;
            epi.stride = opix;
            fn(buf.data() + q0, koff.data(), pk.nk, wt, out, &epi);
            continue;
          }
          fn(buf.data() + q0, koff.data(), pk.nk, wt, out, nullptr);
          for (int i = 0; i < kMr && mt * kMr + i < mg; ++i) {
            const int64_t oc = oc0 + i;
            const int64_t ybase = (b * p.m + oc) * opix;
            Requant r = reqs[static_cast<size_t>(mt * kMr + i)];
            const int32_t* acc = out + i * nr * kLanes;
            auto segment = [&](int64_t q, int64_t n, int64_t yi) {
              if (p.residual && !p.y_int32) r.residual = p.residual + ybase + yi;
              EmitRow(r, acc + (q - q0), n, p.y_int32 ? nullptr : p.y + ybase + yi,
                      p.y_int32 ? p.y_int32 + ybase + yi : nullptr);
            };
            if (!geo.direct) {
              segment(q0, q1 - q0, q0);
              continue;
            }
            for (int64_t q = q0; q < q1;) {  // grid rows: the first ow columns are outputs
              const int64_t oy = q / geo.wp, ox = q % geo.wp;
              if (ox >= p.ow) {
                q = (oy + 1) * geo.wp;
                continue;
              }
              const int64_t end = std::min(q1, oy * geo.wp + p.ow);
              segment(q, end - q, oy * p.ow + ox);
              q = end;
            }
          }
        }
      });
    }
  }
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
