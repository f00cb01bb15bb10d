// The minimizer's start on a whole int8 model: the block around the first departing layer
// (issue 43; docs/check.md, "Shrinking from the departing layer").
#include <algorithm>

#include "campaign/model_check.h"
#include "harness/case_repro.h"
#include "harness/layer_cut.h"
#include "harness/minimize.h"

namespace fusefuzz {

Repro StartFromDepartingLayer(Target& target, const Graph& g, const SampleCheck& s,
                              const Repro& first, const CheckOptions& check,
                              const std::function<void(const std::string&)>& phase,
                              ModelCheckResult* result) {
  if (QuantBoundaries(g).empty()) return first;
  if (first.blame.rule.empty()) {
    result->cut_note = "the finding has no blamed rule to keep";
    return first;
  }
  LayerwiseResult computed;
  const LayerwiseResult* table = s.layers ? &*s.layers : nullptr;
  if (table == nullptr) {
    phase("minimizing: the first departing layer (an optimized run with the boundaries exposed)");
    computed = CheckLayers(target, g, s.inputs, check, s.optimized.run);
    table = &computed;
  }
  if (!table->ran || table->first_departing < 0) {
    result->cut_note = table->ran ? "no layer departs teacher-forced" : table->message;
    return first;
  }
  const std::string& value = table->layers[static_cast<size_t>(table->first_departing)].value;
  const int kMaxWiden = 2;
  for (int widen = 0; widen <= kMaxWiden; ++widen) {
    std::optional<LayerCut> cut = CutAroundLayer(g, s.inputs, value, table->engine_values, widen);
    if (!cut) break;
    const std::string what =
        "the block around '" + value + "' (" + std::to_string(cut->graph.nodes.size()) + " of " +
        std::to_string(g.nodes.size()) + " nodes, widened " + std::to_string(widen) + ")";
    // The fusion that departs must be inside the cut: the blamed rewrite's nodes that are the
    // model's (an engine may name its own) are all kept.
    const bool holds_blamed =
        std::all_of(first.blame.nodes.begin(), first.blame.nodes.end(), [&](const std::string& n) {
          return g.FindNode(n) == nullptr || cut->graph.FindNode(n) != nullptr;
        });
    if (!holds_blamed) {
      phase("minimizing: " + what + " lacks the blamed rewrite's nodes: widening");
      continue;
    }
    phase("minimizing: replaying " + what);
    const ReplayOutcome replay = ReplayCase(first, cut->graph, cut->inputs, target);
    if (!replay.same_finding) {
      phase("minimizing: " + what + " does not give the same finding (" +
            std::string(FindingKindName(replay.outcome.kind)) + ", blamed on '" +
            replay.blame.rule + "'): widening");
      continue;
    }
    Repro start = first;
    start.graph = std::move(cut->graph);
    start.inputs = std::move(cut->inputs);
    start.has_seed = false;  // the engine's integers at the cut, not a seeded sample
    SetOutcome(replay.outcome, &start);
    start.blame = replay.blame;
    result->cut_layer = value;
    result->cut_nodes = static_cast<int64_t>(start.graph.nodes.size());
    result->cut_widen = widen;
    return start;
  }
  result->cut_note = "no block around '" + value + "' gave the same finding";
  return first;
}

}  // namespace fusefuzz
