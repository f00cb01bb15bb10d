// Teacher-forced layer-wise judgement of an int8 model (`fusefuzz check --layers`, issue 43;
// docs/check.md, "Layer by layer"). The integer tensors at the quantization boundaries (the
// outputs of QuantizeLinear, which a fused QLinear op produces too) are exposed as extra graph
// outputs of the target's run, and each is judged on the integer grid against a reference
// computed from the ENGINE's own integers at the boundaries before it
// (RunReferenceTeacherForced): a rounding flip in one layer does not cascade into the next, so
// every layer is judged on its own 1/2 + E instead of the spread carried through the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/check.h"
#include "oracles/oracle.h"
#include "targets/target.h"

namespace fusefuzz {

// One judged tensor: a quantization boundary (integer, on the grid) or a graph output (float,
// judged by the check's oracle from the forced integers before it).
struct LayerCheck {
  std::string value;  // the tensor's name
  std::string node;   // the node of the original graph that produces it
  std::string op;     // that node's op
  bool integer = true;
  bool exposed = false;  // the target answered it (else not judged)
  int64_t elements = 0, informative = 0, saturated = 0, failed = 0;
  // Integer: the worst element's excess in steps (> 0 fails); float: its ratio in the oracle's
  // units over the limit (> 1 fails).
  double worst_excess = 0;
  double worst_e = 0;  // integer: the admitted half-width E at the worst element
  int64_t worst_index = -1;
  double worst_reference = 0, worst_candidate = 0;
  // The failing elements: their channels (dim 1) and how many distinct spatial positions.
  std::vector<int64_t> failing_channels;
  int64_t failing_positions = 0;
  std::string where;  // the grid oracle's pattern of the failures ("one channel (3) ...")
  double InformativeShare() const {
    return elements == 0 ? 0 : static_cast<double>(informative) / static_cast<double>(elements);
  }
};

struct LayerwiseResult {
  bool ran = false;                // the exposed run answered (else `message` says why)
  std::string message;             // why the layers could not be judged
  std::vector<LayerCheck> layers;  // in the original graph's node order
  int first_departing = -1;        // index into layers of the first with a failing element
  // Exposing the boundaries must not change what the engine fuses: the rules it reported with
  // and without the extra outputs (counted by rule; docs/check.md lists the engines checked).
  std::vector<std::string> rewrites_plain, rewrites_exposed;
  bool same_fusion() const { return rewrites_plain == rewrites_exposed; }
  double min_informative_share = 0;  // over the integer layers that were exposed
  // The integers the engine answered at each boundary (what the reference was forced with): the
  // inputs of a cut around the departing layer (harness/layer_cut.h).
  TensorMap engine_values;
};

// The boundary tensors of `g`: the outputs of QuantizeLinear, QLinearConv and QLinearAdd, in
// node order.
std::vector<std::string> QuantBoundaries(const Graph& g);

// `g` with the boundaries added to its outputs (existing outputs first, then the boundaries not
// already among them, nor answered dequantized: a per-tensor DequantizeLinear of one that is a
// graph output already carries its integers, which CheckLayers reads back).
Graph WithBoundaryOutputs(const Graph& g);

// Runs the optimized target once more on WithBoundaryOutputs(g) and judges every boundary and
// graph output teacher-forced. `plain_optimized` is the sample's ordinary optimized run (its
// rewrites are compared with the exposed run's).
LayerwiseResult CheckLayers(Target& target, const Graph& g, const TensorMap& inputs,
                            const CheckOptions& opts, const TargetResult& plain_optimized);

}  // namespace fusefuzz
