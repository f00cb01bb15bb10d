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
  const bool optimized_failure = IsOptimizedRunFailure(r.outcome, opts);
  if (r.outcome.kind == FindingKind::kFusion || r.outcome.kind == FindingKind::kUnquantized ||
      optimized_failure) {
    r.blame = BlameFusion(target, g, inputs, ref, opts, r.outcome);
  }
  r.same_finding = expected.kind != FindingKind::kNone && r.outcome.kind == expected.kind;
  switch (expected.kind) {
    case FindingKind::kFusion:
    case FindingKind::kUnquantized:
      r.same_finding = r.same_finding && r.blame.rule == expected.blame.rule;
      break;
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      // The same failure: its error class, the run it hit and (when blamed) the same rule. A
      // crash's class is not compared: how a memory error ends the process (malloc's abort,
      // SIGSEGV, SIGBUS) depends on the heap's state, not on the bug (PyTorch 8's corruption
      // aborts or segfaults from one run to the next).
      r.same_finding = r.same_finding &&
                       (expected.kind == FindingKind::kCrash ||
                        ErrorClass(r.outcome.run.message) == ErrorClass(expected.detail)) &&
                       (expected.failing_run.empty() ||
                        (expected.failing_run == "optimized") == optimized_failure) &&
                       (expected.blame.rule.empty() || r.blame.rule == expected.blame.rule);
      break;
    case FindingKind::kNone:
    case FindingKind::kKernel:
      break;
  }
  return r;
}

}  // namespace fusefuzz
