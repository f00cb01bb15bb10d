// The fast executor: float32 kernels on Eigen for the whole vocabulary, FusedConv epilogues
// applied per output block. Shares no code with kernels/reference.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct FastOptions {
  int threads = 1;  // intra-op threads; 1 = single-threaded (default)
};

// Runs a verified graph; returns the graph outputs. Throws InputError on missing/mis-shaped
// inputs.
TensorMap RunFast(const Graph& g, const TensorMap& inputs, const FastOptions& opts = {});

// Runs one node of a verified graph on its input tensors (in node input order); `out_shape` is
// the node's inferred output shape (InferNodeShape). For benchmarks and kernel tests.
Tensor RunFastNode(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out_shape,
                   const FastOptions& opts = {});

}  // namespace fusefuzz
