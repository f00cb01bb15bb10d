// Pieces of the verifier shared between its files (ir/verifier.cc, ir/verifier_quant.cc).
#pragma once

#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

// Output shape of a kQuant-family node (QuantizeLinear, DequantizeLinear, QLinearAdd).
Shape QuantShape(const Node& n, const std::vector<Shape>& in);
// QLinearConv's epilogue: the residual add of input 1 (with 2 inputs), then at most one Relu,
// Relu6 or Clip.
void CheckQLinearConvEpilogue(const Node& n, const std::vector<Shape>& in, const Shape& out);
// The node's QuantMap: roles, types, scales, zero points, axes, and the params declared on a
// grid. Negative scales only on QuantizeLinear/DequantizeLinear and only with the option.
// ir/verifier_math.cc: output shapes of the kReduce and kMath families.
Shape ReduceShape(const Node& n, const std::vector<Shape>& in);
Shape MathShape(const Node& n, const std::vector<Shape>& in);
// Transpose's output: the input dims in the order of `perm` (a permutation of 0..rank-1).
Shape TransposeShape(const Node& n, const std::vector<Shape>& in);
void VerifyQuant(const Node& n, const std::vector<Shape>& in, const GraphOptions& options);
// Every integer input read under a quantization role has the type its producer wrote (a uint8
// QuantizeLinear output read by an int8 DequantizeLinear is refused), through Identity,
// Reshape, Flatten and MaxPool.
void CheckQuantTypes(const Graph& g);
// The scale products engines compute in float32 (s_x * s_w of a quantized conv, the bias scale;
// over s_y for QLinearConv) are finite and normal: beyond that is outside the modeled domain.
void CheckScaleProducts(const Graph& g);

}  // namespace fusefuzz
