#include "harness/case_repro.h"

namespace fusefuzz {

Repro ReproOfCheck(const Graph& g, const TensorMap& inputs, const std::string& target,
                   const CheckOptions& check) {
  Repro r;
  r.graph = g;
  r.inputs = inputs;
  r.target = target;
  r.opt = check.opt;
  r.opt.on_rewrite = nullptr;
  r.oracle = check.oracle;
  r.kernel_check = check.kernel_check;
  return r;
}

void SetOutcome(const CaseOutcome& out, Repro* r) {
  r->kind = out.kind;
  r->verdict = std::string(VerdictName(out.verdict));
  r->worst = out.oracle.worst;
  r->detail = out.run.status == RunStatus::kOk ? out.oracle.detail : out.run.message;
  r->target_log = out.run.log;
}

}  // namespace fusefuzz
