// Structural verification and shape inference. Every error names the node (or graph input/
// output), the input index or attribute, and expected vs got.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/limits.h"

namespace fusefuzz {

using ShapeMap = std::map<std::string, Shape>;

// Checks: unique node and value names; each node input defined before use (nodes topological);
// arity; attribute types, counts and ranges; param presence and shapes; epilogue steps; graph
// outputs defined and distinct; every value's element count within `limits`. Returns the shape
// of every value (graph inputs and node outputs). Throws InputError.
ShapeMap VerifyGraph(const Graph& g, const Limits& limits = {});

// Output shape of one node given its input shapes; throws InputError naming the node.
Shape InferNodeShape(const Node& n, const std::vector<Shape>& input_shapes);

// The dims a ReduceMean node reduces, normalized to [0, rank), as a mask over the input's dims;
// throws InputError for an empty, out-of-range or repeated axis.
std::vector<bool> ReduceMask(const Node& n, size_t rank);
// Softmax's `axis` as a dim in [0, rank); Transpose's checked `perm`.
int64_t SoftmaxAxis(const Node& n, size_t rank);
std::vector<int64_t> TransposePerm(const Node& n, size_t rank);
// Pow's exponents (the constant forms exporters write): 0.5, 1, 2, 3.
bool IsSupportedExponent(double exponent);

// numpy/ONNX broadcasting of two shapes; false when incompatible.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);

// Output spatial size of a conv or pool window sweep (ONNX formulas); may be <= 0 when the
// window does not fit, which callers report.
// The Checked forms return std::nullopt when an intermediate (dilated kernel span, padded
// extent) does not fit in int64, which hostile attributes make happen; the plain forms, for
// verified nodes, return 0 then.
std::optional<int64_t> CheckedConvOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                             int64_t dilation, int64_t pad_begin, int64_t pad_end);
// Pools: `dilation` spaces the window taps (ONNX MaxPool/AveragePool dilations).
std::optional<int64_t> CheckedPoolOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                             int64_t pad_begin, int64_t pad_end, bool ceil_mode,
                                             int64_t dilation = 1);
int64_t ConvOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t pad_begin, int64_t pad_end);
int64_t PoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                       int64_t pad_end, bool ceil_mode, int64_t dilation = 1);

}  // namespace fusefuzz
