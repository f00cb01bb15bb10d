// The embedded optimizer's public entry point. Rules and faults are registered by kebab-case
// name (`conv-bn-fold`, fault `through-activation`) and used so in the CLI, logs and reproducers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/rewriter.h"

namespace fusefuzz {

// One applied rewrite. `index` counts from 1 in application order within one Optimize call
// (stable: independent of process history).
struct Rewrite {
  int index = 0;
  std::string rule;                // rule name, or fault name when a fault fired
  std::vector<std::string> nodes;  // names of the matched nodes, in pattern order
};

struct OptimizeOptions {
  std::vector<std::string> pipeline;  // rule names in order; empty = the default pipeline
  std::vector<std::string> disable;   // rules removed from the pipeline
  std::vector<std::string> only;      // if non-empty, keep only these rules
  std::vector<std::string> inject;    // fault names (deliberately wrong variants), off by default
  int64_t bisect_limit = -1;          // apply only the first N rewrites; -1 = no limit
  // Called for every rewrite that the bisect gate considers, applied or skipped.
  std::function<void(const Rewrite&, bool applied)> on_rewrite;
  // Called for every graph mutation of an applied rewrite (verbose logs, debugging a rule).
  std::function<void(const Rewrite&, const Mutation&)> on_mutation;
};

struct OptimizeResult {
  Graph graph;
  std::vector<Rewrite> rewrites;    // applied rewrites, in order
  int64_t skipped_by_bisect = 0;    // matches refused by the bisect gate
  int iterations = 0;               // sweeps over the whole pipeline (at most kMaxIterations)
  bool reached_fixed_point = true;  // false when stopped by the iteration limit
};

// Bound on sweeps over the whole pipeline (XLA HloPassFix); a sweep that changes nothing ends.
inline constexpr int kMaxIterations = 25;

// Throws InputError for unknown rule or fault names (message lists the known ones).
OptimizeResult Optimize(const Graph& g, const OptimizeOptions& opts = {});

struct RuleInfo {
  std::string name;
  std::string summary;  // one line: pattern => result, and its legality conditions
};
const std::vector<RuleInfo>& ListRules();   // in default pipeline order
const std::vector<RuleInfo>& ListFaults();  // the fault catalogue

}  // namespace fusefuzz
