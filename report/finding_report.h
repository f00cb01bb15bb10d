// The human-readable page of a finding (report.md) and its pictures' DOT sources.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/repro.h"
#include "report/target_answer.h"

namespace fusefuzz {

// The markdown report of a finding. `folder` is where the finding folder lives (made absolute
// in the commands so they work from anywhere); empty: commands name `repro.json` relative to the
// finding folder. `answer`: the target asked once more on the case (AskTarget), or null.
std::string FindingReport(const Repro& r, const std::string& folder = "",
                          const TargetAnswer* answer = nullptr);

// The `fusefuzz gen` options that regenerate a case made with generator config `config`
// (GenerationProvenance's "config", or null): "" for the default generator, " --quant" for
// --quant's; nullopt for any other config (then only `--config` with that config does).
std::optional<std::string> GenOptions(const nlohmann::json& config);

// The graph right after the blamed rewrite, when fusefuzz can rebuild it (embedded target).
bool AfterGraph(const Repro& r, Graph* out);

// "(0, 1, 2, 3)": a flat row-major index as coordinates of `shape` ("[5]" when the shape is
// unknown or the index out of range).
std::string Coordinates(int64_t index, const Shape& shape);

// One value on the way from the graph inputs to the worst element, in both graphs.
struct PathValue {
  std::string value, producer, op;  // producer/op empty for a graph input
  Shape shape;
  bool at_worst = false;         // shape equals the failing output's: values at the worst element
  double before = 0, after = 0;  // reference values at the worst element's coordinates
  double max_diff = 0;           // largest |after - before| over the tensor
  int64_t max_diff_index = -1;
  bool diverges = false;  // beyond what double rounding can explain
};

// Runs the reference on the original graph and on `after` (the graph right after the blamed
// rewrite) and compares every value on the path to the failing output that both graphs have,
// in graph order. The first one that diverges is the blamed rewrite's output. Empty when the
// graphs do not run (or are too large to be worth it).
std::vector<PathValue> DivergencePath(const Repro& r, const Graph& after);

// DOT sources of the finding's pictures: blamed nodes filled, the failing output and its worst
// element marked, tiny tensors labeled with their values. `after` is empty when there is no
// after-graph. For a target fusefuzz cannot rebuild the graph of, `answer`'s reported rewrites
// are drawn on the after side instead (ReportedRewritesDot).
struct FindingDots {
  std::string before, after;
  // A big graph (more than kNeighbourhoodNodes nodes) with blamed nodes: those nodes and every
  // node within kNeighbourhoodHops value edges of them, drawn alone (the whole graph is too big
  // to read); "" otherwise.
  std::string neighbourhood;
};
inline constexpr size_t kNeighbourhoodNodes = 40;
inline constexpr int kNeighbourhoodHops = 3;
FindingDots MakeFindingDots(const Repro& r, const TargetAnswer* answer = nullptr);

}  // namespace fusefuzz
