// What the finding's own target answered on the (minimized) case, asked once more when its
// folder is written: the failing run's outputs and the rewrites the target reported. External
// targets give fusefuzz neither their optimized graph nor intermediate values, so these are the
// only evidence report.md can show from them (issue 28): the target's whole failing output next
// to the reference, and its reported rewrites drawn on the graph. Not stored in repro.json (a
// replay asks the target again).
#pragma once

#include <string>
#include <vector>

#include "harness/repro.h"
#include "targets/target.h"

namespace fusefuzz {

struct TargetAnswer {
  bool ran = false;  // the target answered with outputs
  bool optimized = true;
  TensorMap outputs;
  std::vector<Rewrite> rewrites;  // as reported (empty: the target reports none)
  // The target's own standalone reproducer (capability repro), asked for a failing output's
  // worst element; no files without one.
  Reproducer reproducer;
};

// Runs `r` on `target` once, the failing run (unoptimized for a kernel finding, else optimized
// with r.opt). Never throws for the target's failures (then `ran` is false).
TargetAnswer AskTarget(Target& target, const Repro& r);

// The "## The target's output" section: every element of the failing output (the largest
// differences when it has more than kWholeOutput), reference next to the target's value; and
// the rewrites the target reported. "" without an answer or a failing output.
inline constexpr int64_t kWholeOutput = 256;
std::string TargetOutputSection(const Repro& r, const TargetAnswer& a);

// The after picture of a target that does not report its graph: the unoptimized graph with
// each reported rewrite written into the nodes it matched ("(1) conv-bn-fold"), those nodes
// filled (the blamed rewrite's red, the others orange). "" when nothing was reported.
std::string ReportedRewritesDot(const Repro& r, const TargetAnswer& a, const std::string& note);

}  // namespace fusefuzz
