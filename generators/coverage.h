// Generator coverage: which bug-relevant classes of graphs (attribute boundary classes, constant
// broadcast shapes and sides, producer -> consumer pairs with or without fan-out, pattern
// families) a set of graphs contains. The classes are defined once, in coverage.def; the
// classification is a pure function of a Graph, so it classifies graphs from any source
// (generator, corpus, imported models). See docs/generator.md "Coverage".
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct CoverageClass {
  std::string id;     // "attr/Conv/pads=asymmetric", "const/Mul/left/mask=NC", ...
  std::string group;  // "attr", "front", "const", "conv_const", "pair", "motif"
  std::string doc;
};

// Every class of coverage.def, expanded, in definition order (ids unique).
const std::vector<CoverageClass>& AllCoverageClasses();

// Occurrences of each class in `g` (only classes with a positive count; every key is an id of
// AllCoverageClasses()). Throws InputError when `g` does not verify.
std::map<std::string, int64_t> ClassifyGraph(const Graph& g);

// The "quant/" classes of a graph (coverage_quant.cc), added to *counts; ClassifyGraph calls it.
void ClassifyQuantGraph(const Graph& g, std::map<std::string, int64_t>* counts);
// The value-dependent "quant/" classes ("quant/saturated"): runs the reference on the case.
std::map<std::string, int64_t> ClassifyQuantValues(const Graph& g, const TensorMap& inputs);

// Class counts over a set of graphs.
struct CoverageTally {
  int64_t graphs = 0;
  std::map<std::string, int64_t> occurrences;  // total count over all graphs
  std::map<std::string, int64_t> graphs_with;  // graphs with at least one occurrence

  void Add(const std::map<std::string, int64_t>& graph_counts);
  void AddGraph(const Graph& g) { Add(ClassifyGraph(g)); }
  // graphs_with[id] / graphs (0 without graphs).
  double Share(const std::string& id) const;
};

struct CoverageTableOptions {
  // Classes whose share of graphs is below this are flagged (and listed first).
  double min_share = 0.002;
  // Only the flagged classes (for a campaign summary), instead of every class.
  bool only_flagged = false;
};

// The markdown coverage table: a header line with the number of graphs and of flagged classes,
// then `| class | count | graphs | share | |` rows in definition order, flagged rows marked.
// This is what a campaign summary includes.
std::string RenderCoverageMarkdown(const CoverageTally& t, const CoverageTableOptions& o = {});

// The same as JSON: {"graphs", "min_share", "classes": [{"id", "group", "count", "graphs",
// "share", "flagged"}], "flagged": [ids]}.
nlohmann::json CoverageToJson(const CoverageTally& t, const CoverageTableOptions& o = {});

}  // namespace fusefuzz
