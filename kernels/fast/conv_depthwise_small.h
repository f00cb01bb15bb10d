// Depthwise conv on small planes held in registers (conv_depthwise_small.cc), used by
// ConvDepthwise before the blocked path and the plane loops.
#pragma once

#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {

// Computes the depthwise conv (group == C, any channel multiplier) and returns true, or returns
// false without writing anything when this copy or geometry has no register path (SSE2; not a
// stride-1, dilation-1, "same"-padded 3x3 or 5x5; a plane larger than 64 floats or whose row
// shifts exceed a vector).
bool DepthwiseSmall(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                    const Epilogue& epilogue, int threads, float* out);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
