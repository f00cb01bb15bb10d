// The minimizer (reduce/, one reduction pass per file): shrinks a finding's reproducer
// to a fixpoint while it keeps failing with the SAME kind and the SAME blamed rule (never drifting
// to another bug). Strictly decreasing size, deterministic, bounded by a time budget.
#pragma once

#include <cstdint>
#include <string>

#include "harness/repro.h"
#include "targets/target.h"

namespace fusefuzz {

struct MinimizeOptions {
  double budget_seconds = 10;
  bool verbose = false;  // one line per accepted reduction on stderr
  // Added by the minimizer: a deterministic bound on interestingness tests (0 = none), so that
  // tests can stop at the same point on any machine. <= 0 budget_seconds means no time limit.
  int64_t max_tests = 0;
};

struct MinimizeStats {
  int64_t queries = 0;  // target runs
  double seconds = 0;
  int64_t nodes_before = 0, nodes_after = 0;
  int64_t elements_before = 0, elements_after = 0;  // total input + param elements
  bool budget_exhausted = false;
  // Added by the minimizer.
  bool reproduced = true;  // false: the input did not show its recorded finding; returned as is
  std::string note;        // why, when !reproduced
  int64_t tests = 0;       // candidates replayed (each costs several target runs)
  int64_t accepted = 0;    // reductions kept
  int64_t channels_before = 0, channels_after = 0;  // largest channel count of any value
  int64_t height_before = 0, height_after = 0;      // largest H / W of any value
  int64_t width_before = 0, width_after = 0;
};

// Returns the minimized reproducer (with `minimization` stats filled in). The input must fail
// (kind/rule as recorded); if it does not, it is returned unchanged with a note in the stats.
Repro Minimize(const Repro& r, Target& target, const MinimizeOptions& opts = {},
               MinimizeStats* stats = nullptr);

// Does the candidate still show the same finding (kind + blamed rule)? Recomputes the reference,
// runs the check and, for fusion findings, blame. Used by the minimizer and by replay.
struct ReplayOutcome {
  CaseOutcome outcome;
  Blame blame;
  bool same_finding = false;  // same kind and same blamed rule as `expected`
};
ReplayOutcome ReplayCase(const Repro& expected, const Graph& g, const TensorMap& inputs,
                         Target& target);

}  // namespace fusefuzz
