// Teacher forcing for `check --layers` (harness/layerwise.h, docs/check.md "Layer by layer"): the
// reference run with an engine's own integers in place of the reference's at chosen tensors.
#pragma once

#include "kernels/reference/reference.h"

namespace fusefuzz {

// As RunReference, but each integer-valued value named in `forced` (a QuantizeLinear's or QLinear
// op's output) is computed, kept as the answer for that name, and then replaced by the forced
// integers (an engine's own, exact: E = 0) for every node that reads it. So each forced value's
// reference is computed from the forced integers of the layers before it, and an early rounding
// flip does not cascade. An element the type cannot hold (not finite, not whole, out of range)
// is not forced. Returns the graph outputs and the forced values (every value with
// `all_values`).
RefTensorMap RunReferenceTeacherForced(const Graph& g, const TensorMap& inputs,
                                       const TensorMap& forced, bool all_values = false,
                                       QuantizeRounding rounding = QuantizeRounding::kHalfEven);

}  // namespace fusefuzz
