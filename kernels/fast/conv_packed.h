// The packed-panel conv kernel of the AVX2 and AVX-512 copies (conv_packed.cc): im2col written
// straight into register-block panels, and a micro-kernel of our own instead of Eigen's GEMM.
#pragma once

#include <cstdint>

#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {

// True when this ISA copy has the packed kernel (AVX2+FMA or AVX-512); the SSE2 copy uses Eigen.
bool HavePackedConv();

// Conv of any geometry (groups, strides, dilations, pads) through the packed kernel: x is the
// NCHW input, w the [M, C/group, kH, kW] weights, bias [M] or null; the epilogue runs on each
// finished block. Only called when HavePackedConv().
void PackedConv(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                const Epilogue& epilogue, int threads, float* out);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
