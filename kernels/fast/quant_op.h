// The embedded engine's quantized ops (kernels/fast/quant.cc): QuantizeLinear, DequantizeLinear
// (float32, ONNX) and QLinearConv, QLinearAdd (integer arithmetic: the fast int8 kernels of
// kernels/fast/int8). ISA-independent, compiled once; `y` is shaped and sized by the caller.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz::fast {

void QuantOp(const Node& n, const std::vector<const Tensor*>& inputs, Tensor& y);

}  // namespace fusefuzz::fast
