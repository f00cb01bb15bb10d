// The per-graph differential check: reference (double) vs the target unoptimized (a mismatch is a
// `kernel` finding) vs the target optimized (a mismatch only there is a `fusion` finding).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/finding_kind.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "targets/target.h"

namespace fusefuzz {

struct CheckOptions {
  OracleOptions oracle;
  OptimizeOptions opt;       // the target's optimizer options (inject, disable, ...)
  bool kernel_check = true;  // also run unoptimized; false saves time, blames fusion less surely
  int threads = 1;
};

struct CaseOutcome {
  Verdict verdict = Verdict::kPass;
  FindingKind kind = FindingKind::kNone;
  bool optimized = false;  // the failing run was the optimized one
  OracleResult oracle;     // of the deciding comparison
  TargetResult run;        // of the deciding run (outputs, rewrites, message)
  // The unoptimized run's verdict when the kernel check ran and did not decide the case (PASS
  // or MISTRUSTED); nullopt otherwise. A fusion finding whose unoptimized run is MISTRUSTED
  // rests on data that cannot tell whether the kernels are right.
  std::optional<Verdict> unoptimized;
  bool finding() const { return kind != FindingKind::kNone; }
};

// `ref` is RunReference(g, inputs). Never throws for target failures.
CaseOutcome CheckCase(Target& target, const Graph& g, const TensorMap& inputs,
                      const RefTensorMap& ref, const CheckOptions& opts);

// A target's failure message with its particulars removed: the first line, numbers replaced by
// '#', quoted names (with their quotes) by '*'. "node 'n7': shape [1,3]" and
// "node \"c2\": shape [2,8]" are one class.
std::string ErrorClass(const std::string& message);

// True when the target error, crash or timeout ran into the optimized run only (the unoptimized
// run passed): a fusion-side failure, blamed and minimized like a mismatch.
bool IsOptimizedRunFailure(const CaseOutcome& o, const CheckOptions& opts);

// `o` fails as `failing` did: the same kind, and for a target error, crash or timeout the same
// error class (a wrong-shape error must not slide into an invalid-model error while shrinking).
bool SameFailure(const CaseOutcome& o, const CaseOutcome& failing);

// The nodes of `run.backend_quantizes` that ran in float or reference form (in that order).
std::vector<std::string> LeftUnquantized(const TargetResult& run);

// One run of the target (optimized or not, with `opt`) judged against `ref`.
CaseOutcome RunAndJudge(Target& target, const Graph& g, const TensorMap& inputs,
                        const RefTensorMap& ref, const CheckOptions& opts, bool optimize,
                        const OptimizeOptions& opt);

}  // namespace fusefuzz
