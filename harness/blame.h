// Blame of a fusion finding: the first rewrite after which the oracle fails.
//   bisect   (targets with bisect_limit): binary search over the number of applied rewrites
//            (LLVM OptBisect style), then ablation: rerun with that rule disabled.
//   disable  (targets with `disable` and reported rewrite rules, no bisect): the prefix of the
//            applied rules (in the order they first applied) that fails with every later rule
//            disabled, shortest first, names the rule; it is blamed when disabling it alone
//            makes the case PASS. Otherwise the first rule whose removal makes it PASS is
//            blamed (a MISTRUSTED rerun is not a pass: the data could not tell).
//   forms    (kind unquantized, targets without bisect or disable): the reported rewrite whose
//            nodes include the first node left in float or reference form.
//   none     otherwise: the finding says blame is unavailable.
#pragma once

#include <string>
#include <vector>

#include "harness/check.h"

namespace fusefuzz {

struct Blame {
  std::string method = "none";     // bisect | disable | forms | none
  int rewrite_index = 0;           // 1-based; 0 when unknown
  std::string rule;                // blamed rule (or fault) name; empty when unknown
  std::vector<std::string> nodes;  // matched nodes of the blamed rewrite
  // The case rerun with the rule disabled (or the fault not injected): "pass" (verdict PASS),
  // "fail" (the same failure), "not-run", or the other verdict it got in lower case, such as
  // "mistrusted" (the data cannot tell: that confirms nothing) or "target_error".
  std::string ablation = "not-run";
  // Earlier rewrites whose rule, disabled alone, also makes the case pass: they set up the state
  // the blamed rewrite went wrong on (a shared weight scaled in place, a bias rounded on a stale
  // grid), "(1) qdq-conv-bn-fold at c,bn". Empty when none did or none was tried.
  std::vector<std::string> set_up_by;
  int queries = 0;               // target runs spent
  std::vector<std::string> log;  // "BISECT: applying rewrite (N) <rule> at <nodes>" lines
  bool known() const { return !rule.empty() || rewrite_index > 0; }
};

// `failing` is the optimized-run outcome of a fusion finding or of an optimized-run-only target
// error, crash or timeout (its rewrites, if reported). Failing means SameFailure(o, failing):
// a MISMATCH of the optimized run, or the same kind of error with the same error class.
Blame BlameFusion(Target& target, const Graph& g, const TensorMap& inputs, const RefTensorMap& ref,
                  const CheckOptions& opts, const CaseOutcome& failing);

}  // namespace fusefuzz
