#include "harness/check.h"

namespace fusefuzz {
namespace {

Verdict VerdictOf(RunStatus s) {
  switch (s) {
    case RunStatus::kOk:
      return Verdict::kPass;
    case RunStatus::kUnsupported:
      return Verdict::kUnsupported;
    case RunStatus::kError:
      return Verdict::kTargetError;
    case RunStatus::kCrash:
      return Verdict::kCrash;
    case RunStatus::kTimeout:
      return Verdict::kTimeout;
  }
  return Verdict::kTargetError;
}

FindingKind KindOf(RunStatus s) {
  switch (s) {
    case RunStatus::kCrash:
      return FindingKind::kCrash;
    case RunStatus::kTimeout:
      return FindingKind::kTimeout;
    case RunStatus::kError:
      return FindingKind::kTargetError;
    case RunStatus::kOk:
    case RunStatus::kUnsupported:
      return FindingKind::kNone;
  }
  return FindingKind::kNone;
}

}  // namespace

std::string ErrorClass(const std::string& message) {
  // The first line, with what varies between cases of one failure replaced: numbers (sizes,
  // indices, ids, addresses) by '#', quoted text (node, value and file names) by '*'.
  std::string out;
  const std::string line = message.substr(0, message.find('\n'));
  for (size_t i = 0; i < line.size() && out.size() < 300; ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      const size_t end = line.find(c, i + 1);
      if (end != std::string::npos) {
        out += '*';
        i = end;
        continue;
      }
    }
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += c;
  }
  return out;
}

bool IsOptimizedRunFailure(const CaseOutcome& o, const CheckOptions& opts) {
  switch (o.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      return o.optimized && opts.kernel_check;
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
      return false;
  }
  return false;
}

bool SameFailure(const CaseOutcome& o, const CaseOutcome& failing) {
  if (o.kind != failing.kind) return false;
  switch (o.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      return ErrorClass(o.run.message) == ErrorClass(failing.run.message);
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
      return true;
  }
  return true;
}

CaseOutcome RunAndJudge(Target& target, const Graph& g, const TensorMap& inputs,
                        const RefTensorMap& ref, const CheckOptions& opts, bool optimize,
                        const OptimizeOptions& opt) {
  CaseOutcome out;
  out.optimized = optimize;
  RunRequest req;
  req.optimize = optimize;
  req.opt = opt;
  req.threads = opts.threads;
  out.run = target.Run(g, inputs, req);
  if (out.run.status != RunStatus::kOk) {
    out.verdict = VerdictOf(out.run.status);
    out.kind = KindOf(out.run.status);
    return out;
  }
  // Each run is judged for the arithmetic its target declares (hello "precision").
  OracleOptions oracle = opts.oracle;
  oracle.precision = target.caps().precision;
  out.oracle = Compare(g, ref, out.run.outputs, oracle);
  out.verdict = out.oracle.verdict;
  if (out.verdict == Verdict::kMismatch)
    out.kind = optimize ? FindingKind::kFusion : FindingKind::kKernel;
  return out;
}

CaseOutcome CheckCase(Target& target, const Graph& g, const TensorMap& inputs,
                      const RefTensorMap& ref, const CheckOptions& opts) {
  if (opts.kernel_check) {
    CaseOutcome plain = RunAndJudge(target, g, inputs, ref, opts, false, opts.opt);
    // Anything but a pass or a data-cannot-tell verdict decides the case already.
    if (plain.verdict != Verdict::kPass && plain.verdict != Verdict::kMistrusted) return plain;
  }
  return RunAndJudge(target, g, inputs, ref, opts, true, opts.opt);
}

}  // namespace fusefuzz
