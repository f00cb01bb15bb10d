// The embedded engine's quantized ops (kernels/fast/quant.cc): QuantizeLinear, DequantizeLinear
// (float32, ONNX) and QLinearConv, QLinearAdd (integer arithmetic: the fast int8 kernels of
// kernels/fast/int8). ISA-independent, compiled once; `y` is shaped and sized by the caller.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz::fast {

// threads: QLinearConv's intra-op threads (the others run on one). QLinearConv keeps each
// node's packed weights per thread and reuses them while W, B and the geometry are unchanged.
void QuantOp(const Node& n, const std::vector<const Tensor*>& inputs, Tensor& y, int threads = 1);

}  // namespace fusefuzz::fast
