// The GEMM convolutions' input packing (qgemm_input.h).
#include "kernels/fast/int8/qgemm_input.h"

#include <immintrin.h>

#include <algorithm>

#include "kernels/fast/int8/qsimd.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8::gemm {
namespace {

using int8::QConvProblem;

// n words of channels rows[0..cpg) (null: a missing channel, weight 0) from columns [0, n).
void PackRow(const WordFormat& f, const uint8_t* const* rows, int64_t n, int32_t* out) {
  int64_t i = 0;
  const __m128i zero = _mm_setzero_si128(), flip = _mm_set1_epi8(static_cast<char>(0x80));
  auto load = [&](const uint8_t* r) {
    return r ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i)) : zero;
  };
  if (f.vnni) {
    for (; i + 16 <= n; i += 16) {
      __m128i r[4];
      for (int j = 0; j < 4; ++j) {
        r[j] = load(rows[j]);
        if (f.is_signed) r[j] = _mm_xor_si128(r[j], flip);
      }
      const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
      const __m128i b0 = _mm_unpacklo_epi8(r[2], r[3]), b1 = _mm_unpackhi_epi8(r[2], r[3]);
      __m128i* o = reinterpret_cast<__m128i*>(out + i);
      _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(a0, b0));
      _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(a0, b0));
      _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(a1, b1));
      _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(a1, b1));
    }
    for (; i < n; ++i) {
      uint32_t word = 0;
      for (int j = 0; j < 4; ++j) {
        const uint32_t b = rows[j] ? (rows[j][i] ^ (f.is_signed ? 0x80u : 0u)) : 0u;
        word |= b << (8 * j);
      }
      out[i] = static_cast<int32_t>(word);
    }
    return;
  }
  const __m128i zx = _mm_set1_epi16(static_cast<int16_t>(f.zx));
  auto widen = [&](__m128i b, bool hi) {  // 8 bytes to int16, minus the zero point
    const __m128i w =
        f.is_signed ? _mm_srai_epi16(hi ? _mm_unpackhi_epi8(b, b) : _mm_unpacklo_epi8(b, b), 8)
                    : (hi ? _mm_unpackhi_epi8(b, zero) : _mm_unpacklo_epi8(b, zero));
    return _mm_sub_epi16(w, zx);
  };
  for (; i + 16 <= n; i += 16) {
    __m128i* o = reinterpret_cast<__m128i*>(out + i);
    for (int h = 0; h < 2; ++h) {
      const __m128i c0 = rows[0] ? widen(load(rows[0]), h) : zero;
      const __m128i c1 = rows[1] ? widen(load(rows[1]), h) : zero;
      _mm_storeu_si128(o + 2 * h, _mm_unpacklo_epi16(c0, c1));
      _mm_storeu_si128(o + 2 * h + 1, _mm_unpackhi_epi16(c0, c1));
    }
  }
  for (; i < n; ++i) {
    uint32_t word = 0;
    for (int j = 0; j < 2; ++j) {
      if (!rows[j]) continue;
      const int32_t v = (f.is_signed ? static_cast<int32_t>(static_cast<int8_t>(rows[j][i]))
                                     : static_cast<int32_t>(rows[j][i])) -
                        f.zx;
      word |= (static_cast<uint32_t>(v) & 0xFFFFu) << (16 * j);
    }
    out[i] = static_cast<int32_t>(word);
  }
}

void Fill(int32_t* out, int64_t n, uint32_t word) {
  std::fill(out, out + n, static_cast<int32_t>(word));
}

}  // namespace

Geometry GeometryOf(const QConvProblem& p) {
  Geometry g;
  g.direct = p.stride_h == 1 && p.stride_w == 1;
  if (g.direct) {
    g.wp = p.ow + (p.kw - 1) * p.dilation_w;
    g.hp = p.oh + (p.kh - 1) * p.dilation_h;
    g.qv = (p.oh - 1) * g.wp + p.ow;
  } else {
    g.qv = p.oh * p.ow;
  }
  constexpr int64_t tile = kNr * kLanes;
  const int64_t full = g.qv / tile, rest = g.qv - full * tile;
  g.nr_last = rest == 0 ? kNr : static_cast<int>((rest + kLanes - 1) / kLanes);
  g.qp = full * tile + (rest == 0 ? 0 : g.nr_last * kLanes);
  if (g.direct) {
    g.plane = g.qp + (p.kh - 1) * p.dilation_h * g.wp + (p.kw - 1) * p.dilation_w;
    g.plane = std::max(g.plane, g.hp * g.wp);
  }
  return g;
}

// The words of image b, group g; koff[k] the offset of word k.
void PackInput(const QPacked& pk, const QConvProblem& p, const Geometry& geo, int64_t b, int64_t g,
               const WordFormat& f, std::vector<int32_t>& buf, std::vector<int64_t>& koff) {
  const int64_t cg = p.c / p.group, taps = p.kh * p.kw;
  auto channel = [&](int64_t cgi, int64_t j) -> const uint8_t* {
    const int64_t ci = cgi * pk.cpg + j;
    return ci < cg ? p.x + (b * p.c + g * cg + ci) * p.h * p.w : nullptr;
  };
  koff.resize(static_cast<size_t>(pk.nk));
  if (geo.direct) {
    buf.resize(static_cast<size_t>(pk.ncg * geo.plane));
    for (int64_t cgi = 0; cgi < pk.ncg; ++cgi) {
      int32_t* plane = buf.data() + cgi * geo.plane;
      for (int64_t t = 0; t < taps; ++t) {
        koff[static_cast<size_t>(cgi * taps + t)] =
            cgi * geo.plane + (t / p.kw) * p.dilation_h * geo.wp + (t % p.kw) * p.dilation_w;
      }
      const int64_t x0 = std::clamp<int64_t>(p.pad_left, 0, geo.wp);
      const int64_t x1 = std::clamp<int64_t>(p.pad_left + p.w, x0, geo.wp);
      if (x0 == 0 && x1 == geo.wp && x1 - x0 == p.w) {  // no side padding: one run of rows
        const int64_t y0 = std::clamp<int64_t>(p.pad_top, 0, geo.hp);
        const int64_t y1 = std::clamp<int64_t>(p.pad_top + p.h, y0, geo.hp);
        const uint8_t* rows[4] = {nullptr, nullptr, nullptr, nullptr};
        for (int64_t j = 0; j < pk.cpg; ++j) {
          const uint8_t* c = channel(cgi, j);
          rows[j] = c ? c + (y0 - p.pad_top) * p.w : nullptr;
        }
        Fill(plane, y0 * geo.wp, f.pad);
        PackRow(f, rows, (y1 - y0) * geo.wp, plane + y0 * geo.wp);
        Fill(plane + y1 * geo.wp, geo.plane - y1 * geo.wp, f.pad);
        continue;
      }
      for (int64_t yy = 0; yy < geo.hp; ++yy) {
        int32_t* row = plane + yy * geo.wp;
        const int64_t iy = yy - p.pad_top;
        if (iy < 0 || iy >= p.h) {
          Fill(row, geo.wp, f.pad);
          continue;
        }
        const uint8_t* rows[4] = {nullptr, nullptr, nullptr, nullptr};
        for (int64_t j = 0; j < pk.cpg; ++j) {
          const uint8_t* c = channel(cgi, j);
          rows[j] = c ? c + iy * p.w + (x0 - p.pad_left) : nullptr;
        }
        Fill(row, x0, f.pad);
        PackRow(f, rows, x1 - x0, row + x0);
        Fill(row + x1, geo.wp - x1, f.pad);
      }
      Fill(plane + geo.hp * geo.wp, geo.plane - geo.hp * geo.wp, f.pad);
    }
    return;
  }
  buf.resize(static_cast<size_t>(pk.nk * geo.qp));
  for (int64_t cgi = 0; cgi < pk.ncg; ++cgi) {
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t k = cgi * taps + t, ky = t / p.kw, kx = t % p.kw;
      koff[static_cast<size_t>(k)] = k * geo.qp;
      int32_t* dst = buf.data() + k * geo.qp;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
          int32_t* o = dst + oy * p.ow + ox;
          if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) {
            *o = static_cast<int32_t>(f.pad);
            continue;
          }
          const uint8_t* rows[4] = {nullptr, nullptr, nullptr, nullptr};
          for (int64_t j = 0; j < pk.cpg; ++j) {
            const uint8_t* c = channel(cgi, j);
            rows[j] = c ? c + iy * p.w + ix : nullptr;
          }
          PackRow(f, rows, 1, o);
        }
      }
      Fill(dst + geo.qv, geo.qp - geo.qv, f.pad);
    }
  }
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8::gemm
