// The GEMM convolutions' input packing (qconv_gemm.cc, qconv_gemm_oc.cc): the input of one
// (image, group) as int32 words of `cpg` channels at one pixel, on the zero-point-bordered grid
// of the padded plane (stride 1, "direct") or as im2col words.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/fast/fast_ops.h"  // FUSEFUZZ_ISA
#include "kernels/fast/int8/qkernels.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8::gemm {

constexpr int kNr = 3;  // qconv_gemm.cc's tiles: vectors of positions (kMr x kNr vectors)

// How inputs become words: the byte each channel contributes (vnni: u8, int8 inputs + 128)
// or the int16 (x - zero point).
struct WordFormat {
  bool vnni = false, is_signed = false;
  int32_t zx = 0;    // x_zero_point
  uint32_t pad = 0;  // the word of a padded position
};

struct Geometry {
  bool direct = false;
  int64_t wp = 0, hp = 0;  // direct: the padded plane
  int64_t qv = 0;          // positions computed: direct (oh-1)*wp + ow; im2col oh*ow
  int64_t qp = 0;          // positions in the buffer (whole tiles)
  int64_t plane = 0;       // direct: words per channel group's plane
  int nr_last = 0;         // vectors of the last tile (qconv_gemm.cc's tiles)
};

Geometry GeometryOf(const int8::QConvProblem& p);
// The words of image b, group g into buf; koff[k] the offset of word k (k = channel group *
// taps + tap): position q's word k is buf[koff[k] + q].
void PackInput(const QPacked& pk, const int8::QConvProblem& p, const Geometry& geo, int64_t b,
               int64_t g, const WordFormat& f, std::vector<int32_t>& buf,
               std::vector<int64_t>& koff);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8::gemm
