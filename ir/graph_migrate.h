// Reading older graph format versions (docs/graph-format.md, "Versions").
#pragma once

#include "ir/graph.h"

namespace fusefuzz {

// The graph format version the writer emits and the newest the reader knows.
inline constexpr int kGraphFormatVersion = 2;

// Version 1 -> 2: a PRelu slope [C] applied per channel (dim 1); version 2 broadcasts it from
// the right as ONNX does. So every version-1 slope [C] with C > 1 becomes
// PerChannelSlopeShape of its input ([C, 1, 1] for NCHW, [C] again for [N, C]); FusedConv
// epilogue slopes [M] become [M, 1, 1]; [1] and Gemm epilogue slopes ([N]) keep their shape.
// `g` is in topological order and not yet verified; shapes are inferred along the way with the
// version-2 rules. Where inference fails (an invalid graph) migration stops and the verifier
// reports the error afterwards.
void MigrateV1PReluSlopes(Graph& g);

}  // namespace fusefuzz
