// Channel-blocked depthwise conv of the AVX-512 copy (conv_depthwise_blocked.cc), used by
// ConvDepthwise before its plane loops.
#pragma once

#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {

// Computes the depthwise conv (group == C == M) and returns true, or returns false without
// writing anything when this copy or geometry has no blocked path (not AVX-512, a channel
// multiplier, more than 25 taps, hostile pads/strides/dilations).
bool DepthwiseBlocked(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                      const Epilogue& epilogue, int threads, float* out);

// Whether every epilogue step is the same elementwise function on every channel and position,
// so that it may run once over a batch of planes.
bool PositionFree(const Epilogue& epilogue);

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
