// The int8 kernels of one ISA copy (namespace fusefuzz::fast::<isa>::q8), reached only through
// the copy's KernelTable (conv_int8_pack, conv_int8, conv_int8_free, add_int8). Callers use
// int8::QConv / QConvPlan / QAdd (qconv_fast.h), which pick the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/fast/int8/qconv.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA::q8 {

// Weights packed for one problem geometry, in the copy's own layout. `w` holds one int32 word
// per (output channel, channel group, tap): the weights of `cpg` consecutive input channels at
// that tap (cpg = 4 int8 bytes for vpdpbusd, 2 int16 halves for pmaddwd, 1 for depthwise).
// offset[m] is what the accumulator starts at: the bias, minus the zero-point correction where
// the kernel multiplies raw (not zero-point-shifted) inputs.
struct QPacked {
  enum class Kind : uint8_t { kGemm, kDepthwise } kind = Kind::kGemm;
  bool vnni = false;            // vpdpbusd on u8 quads (else pmaddwd on int16 pairs)
  int64_t cpg = 1;              // input channels per word
  int64_t ncg = 0;              // channel groups per conv group: ceil((c / group) / cpg)
  int64_t nk = 0;               // words per output channel: ncg * kh * kw
  int64_t mtiles = 0;           // register tiles of output channels per conv group
  std::vector<int32_t> w;       // gemm: [group][mtiles][nk][kMr]; depthwise: [m][kh * kw]
  std::vector<int32_t> offset;  // [m]
  // Depthwise, AVX-512 copy: the channel-blocked words (qconv_dw_channels.cc), lane l of block
  // cb the channel c = cb * 16 + l (output channel c * multiplier + j), 0 past c:
  // wc [j][cb][kh * kw][16], offc [j][cb][16]. Empty in the other copies.
  std::vector<int32_t> wc, offc;
  // Depthwise, AVX-512 copy on a VNNI + VBMI CPU: the tap-group words of qconv_dw_vbmi.cc, the
  // weights of taps 4 g .. 4 g + 3 of kernel row ky in the 4 bytes of word [oc][ky][g] (0 past
  // kw), ng = ceil(kw / 4) groups, and offv[oc] = bias - zu * sum(w) with zu the zero point of
  // the u8 inputs (x_zero_point, + 128 for int8). Empty otherwise.
  int64_t ng = 0;
  std::vector<int32_t> wv, offv;
  // accmax[oc]: the most |acc| of offv + the taps can be over every input, INT64_MAX where that
  // sum can leave int32 (dwq::FitsInt32).
  std::vector<int64_t> accmax;
  // And, where kw <= 4, the same words channel-blocked for qconv_dw_channels.cc's tap-group
  // rows: wct [j][cb][kh][16], offct [j][cb][16] (as wc, offc). Empty otherwise.
  std::vector<int32_t> wct, offct;
  // GEMM: the weights as qconv_gemm_oc.cc's 32-channel tiles ([group][mtiles][nk][32]) rather
  // than kMr-channel ones; mtiles counts those.
  bool oc_tiles = false;
  // What it was packed for (Run checks that the problem matches).
  int64_t m = 0, c = 0, kh = 0, kw = 0, group = 0;
  int8::QStorage x_type = int8::QStorage::kUint8;
  int32_t x_zero_point = 0;
};

QPacked* Pack(const int8::QConvProblem& p);
void Run(const QPacked& pk, const int8::QConvProblem& p, int threads);
// Depthwise (c / group == 1, any multiplier), called by Run.
void RunDepthwise(const QPacked& pk, const int8::QConvProblem& p, int threads);
// The channel-blocked depthwise kernel (AVX-512 copy); false where it does not run (then
// RunDepthwise's plane kernel does).
bool RunDepthwiseChannels(const QPacked& pk, const int8::QConvProblem& p, int threads);
// The tap-group depthwise kernel (AVX-512 copy, VNNI + VBMI); false where it does not run.
bool RunDepthwiseVbmi(const QPacked& pk, const int8::QConvProblem& p, int threads);
// The depthwise kernel of planes in one register (AVX-512 copy, VNNI + VBMI, planes of at most
// 63 input and 64 output bytes, kw <= 4: qconv_dw_regs.cc); false where it does not run.
bool RunDepthwiseRegs(const QPacked& pk, const int8::QConvProblem& p, int threads);
// The pair-word depthwise kernel (AVX2 copy, qconv_dw_avx2.cc); false where it does not run.
bool RunDepthwiseAvx2(const QPacked& pk, const int8::QConvProblem& p, int threads);
// The output-channel-lane GEMM (qconv_gemm_oc.cc): whether it computes fewer lanes than
// qconv_gemm.cc's tiles for p (AVX-512 copy, VNNI + VBMI, stride 1), and its run.
bool UseOcTiles(const int8::QConvProblem& p, bool vnni);
void RunOcTiles(const QPacked& pk, const int8::QConvProblem& p, int threads);
void QAddKernel(const int8::QAddProblem& p, int threads);
void QRequantizeKernel(const int8::QConvProblem& p, const int32_t* acc, int threads);

// A kernel's thread-local buffer grown to at least n elements (never shrunk: allocated once per
// thread and size).
template <typename T>
T* Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA::q8
