// Unidirectional (ONNX) broadcasting of PRelu slopes (docs/graph-format.md, PRelu). Implemented
// in ir/verifier.cc.
#pragma once

#include <optional>

#include "ir/graph.h"

namespace fusefuzz {

// True when `from` broadcasts unidirectionally to `to` (ONNX: aligned from the right, each dim
// of `from` equal to `to`'s or 1, rank of `from` at most rank of `to`). A PRelu slope must.
bool BroadcastsTo(const Shape& from, const Shape& to);

// The per-channel PRelu slope shape for an input of shape `x`: [C, 1, ..., 1] of rank
// rank(x) - 1, so that it broadcasts along dim 1 (ONNX's right alignment): [C, 1, 1] for NCHW,
// [C] for [N, C]. Epilogue steps (EpilogueKind::kActivation) hold slopes of this shape or [1]:
// [M, 1, 1] in a FusedConv, [N] in a Gemm.
Shape PerChannelSlopeShape(const Shape& x);

// When `slope` broadcasts to `x` and varies along dim 1 only: PerChannelSlopeShape(x); when it
// is constant ([1], [1, 1, 1], ...): [1]. Otherwise (it varies along N, H or W, or does not
// broadcast) nullopt: such a slope cannot be an epilogue step.
std::optional<Shape> AsPerChannelSlope(const Shape& slope, const Shape& x);

}  // namespace fusefuzz
