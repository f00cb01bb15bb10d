#include "harness/layer_cut.h"

#include <set>
#include <utility>

#include "harness/layerwise.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace fusefuzz {

std::optional<LayerCut> CutAroundLayer(const Graph& g, const TensorMap& inputs,
                                       const std::string& value, const TensorMap& engine_values,
                                       int widen) {
  const int start = g.ProducerIndex(value);
  if (start < 0) return std::nullopt;
  const std::vector<std::string> listed = QuantBoundaries(g);
  const std::set<std::string> boundaries(listed.begin(), listed.end());
  // depth[i]: the fewest boundaries crossed to reach node i (-1: not in the cut). A node reached
  // again with fewer crossings is walked again: it may now cross one more.
  std::vector<int> depth(g.nodes.size(), -1);
  std::vector<std::pair<int, int>> back, forward;  // (node, depth) still to walk
  auto reach = [&](int i, int d, bool walk_forward) {
    if (depth[size_t(i)] >= 0 && depth[size_t(i)] <= d) return;
    depth[size_t(i)] = d;
    back.emplace_back(i, d);
    if (walk_forward) forward.emplace_back(i, d);
  };
  reach(start, 0, true);
  while (!back.empty() || !forward.empty()) {
    if (!back.empty()) {
      const auto [i, d] = back.back();
      back.pop_back();
      for (const std::string& v : g.nodes[size_t(i)].inputs) {
        const int p = g.ProducerIndex(v);
        if (p < 0) continue;  // a model input: kept as it is
        // Back across a boundary only while the widening allows: else its integers come in.
        if (boundaries.count(v) == 0) {
          reach(p, d, false);
        } else if (d < widen) {
          reach(p, d + 1, false);
        }
      }
      continue;
    }
    const auto [i, d] = forward.back();
    forward.pop_back();
    const Node& n = g.nodes[size_t(i)];
    // Past the departing layer's own value freely; past any later boundary only when widening.
    const bool crossing = i != start && boundaries.count(n.output) > 0;
    if (crossing && d >= widen) continue;
    for (int c : g.Consumers(n.output)) reach(c, crossing ? d + 1 : d, true);
  }
  LayerCut cut;
  cut.widen = widen;
  std::set<std::string> produced, seen_inputs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (depth[i] >= 0) produced.insert(g.nodes[i].output);
  }
  if (produced.size() == g.nodes.size()) return std::nullopt;  // nothing cut away
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (depth[i] < 0) continue;
    const Node& n = g.nodes[i];
    for (const std::string& v : n.inputs) {
      if (produced.count(v) > 0 || !seen_inputs.insert(v).second) continue;
      if (g.IsGraphInput(v)) {
        auto in = inputs.find(v);
        if (in == inputs.end()) return std::nullopt;
        cut.graph.inputs.push_back({v, in->second.shape});
        cut.inputs[v] = in->second;
        continue;
      }
      auto engine = engine_values.find(v);
      if (boundaries.count(v) == 0 || engine == engine_values.end()) return std::nullopt;
      cut.graph.inputs.push_back({v, engine->second.shape});
      cut.inputs[v] = engine->second;
      cut.entries.push_back(v);
    }
    cut.graph.nodes.push_back(n);
  }
  // Outputs: what the model answers from the cut, and the boundaries it ends at that the rest
  // of the model reads (the block's output), so the departing value still reaches an output.
  for (const Node& n : cut.graph.nodes) {
    bool read_outside = false;
    for (int c : g.Consumers(n.output))
      read_outside |= produced.count(g.nodes[size_t(c)].output) == 0;
    if (g.IsGraphOutput(n.output) || (boundaries.count(n.output) > 0 && read_outside)) {
      cut.graph.outputs.push_back(n.output);
    }
  }
  if (cut.graph.outputs.empty()) cut.graph.outputs.push_back(value);
  cut.graph.options = g.options;
  try {
    VerifyGraph(cut.graph);
  } catch (const InputError&) {
    return std::nullopt;  // e.g. an op whose input cannot be an integer graph input
  }
  return cut;
}

}  // namespace fusefuzz
