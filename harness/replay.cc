// Re-checking a case against a recorded finding: shared by `fusefuzz replay` and the minimizer.
#include <exception>

#include "harness/minimize.h"

namespace fusefuzz {

ReplayOutcome ReplayCase(const Repro& expected, const Graph& g, const TensorMap& inputs,
                         Target& target) {
  ReplayOutcome r;
  CheckOptions opts = CheckOptionsOf(expected);
  RefTensorMap ref = RunReference(g, inputs);
  r.outcome = CheckCase(target, g, inputs, ref, opts);
  if (r.outcome.kind == FindingKind::kFusion) {
    r.blame = BlameFusion(target, g, inputs, ref, opts, r.outcome);
  }
  r.same_finding = expected.kind != FindingKind::kNone && r.outcome.kind == expected.kind &&
                   (expected.kind != FindingKind::kFusion || r.blame.rule == expected.blame.rule);
  return r;
}

}  // namespace fusefuzz
