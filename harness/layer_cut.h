// The block around a departing layer, cut out of a whole int8 model so that the minimizer starts
// there instead of at the whole model (issue 43: the founding ResNet-18 report did not shrink
// within `check`'s budget; docs/check.md, "Shrinking from the departing layer"). The cut's inputs
// are the ENGINE's own integers at the quantization boundaries where it begins, the values the
// teacher-forced layer table (harness/layerwise.h) judged that layer from, so the cut sees the
// same integers the engine's fused layer saw in the whole model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

struct LayerCut {
  Graph graph;
  TensorMap inputs;
  int widen = 0;                     // boundaries crossed beyond the departing layer's own
  std::vector<std::string> entries;  // the boundaries whose integers feed it (graph inputs)
};

// The nodes around `value` (a boundary value the layer table found departing): back from its
// producer to the boundaries before it, forward to the boundaries after it, crossing `widen`
// more boundaries each way; every node a kept node reads is walked back the same way. A boundary
// where the walk stops becomes an integer graph input holding `engine_values`' integers there;
// the model's own inputs the cut reaches keep `inputs`' values. Its outputs: the model outputs it
// holds and the boundaries it ends at that the rest of the model reads. nullopt when the cut
// would be the whole model, or a boundary it starts at has no engine integers.
std::optional<LayerCut> CutAroundLayer(const Graph& g, const TensorMap& inputs,
                                       const std::string& value, const TensorMap& engine_values,
                                       int widen);

}  // namespace fusefuzz
