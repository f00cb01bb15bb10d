#include "harness/finding_report.h"

#include <cstdio>
#include <sstream>

#include "ir/printers.h"

namespace fusefuzz {
namespace {

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

// The graph right after the blamed rewrite (embedded target only: external targets do not give
// us their graphs).
bool AfterGraph(const Repro& r, Graph* out) {
  if (r.target != "embedded" || r.blame.rewrite_index <= 0) return false;
  OptimizeOptions opt = r.opt;
  opt.bisect_limit = r.blame.rewrite_index;
  try {
    *out = Optimize(r.graph, opt).graph;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string FindingReport(const Repro& r) {
  std::ostringstream md;
  md << "# Finding: " << FindingKindName(r.kind)
     << (r.blame.rule.empty() ? "" : " in `" + r.blame.rule + "`") << "\n\n";
  md << "- verdict: **" << r.verdict << "**\n";
  md << "- target: `" << r.target << "`";
  if (!r.opt.inject.empty()) {
    md << ", injected faults:";
    for (const auto& f : r.opt.inject) md << " `" << f << "`";
  }
  md << "\n- oracle: `" << OracleKindName(r.oracle.kind) << "`\n";
  if (!r.detail.empty()) md << "- detail: " << r.detail << "\n";
  md << "\n## What changed\n\n";
  if (r.kind == FindingKind::kFusion) {
    md << "The graph computes different values after the optimizer than before it; the "
          "unoptimized run on the same target agrees with the reference, so a rewrite changed "
          "the semantics.\n\n";
  } else if (r.kind == FindingKind::kKernel) {
    md << "The target disagrees with the reference even without optimization: a kernel bug, "
          "not a fusion bug.\n\n";
  } else {
    md << "The target failed to produce outputs (" << FindingKindName(r.kind) << ").\n\n";
  }
  if (!r.worst.output.empty()) {
    md << "Worst element: output `" << r.worst.output << "` index " << r.worst.index
       << ": reference " << Fmt(r.worst.reference) << ", candidate " << Fmt(r.worst.candidate)
       << ", allowed |difference| " << Fmt(r.worst.bound) << " (ratio " << Fmt(r.worst.ratio)
       << ").\n\n";
  }
  md << "## Blamed rewrite\n\n";
  if (r.blame.known()) {
    md << "Rewrite (" << r.blame.rewrite_index << ") `" << r.blame.rule << "` at";
    for (const auto& n : r.blame.nodes) md << " `" << n << "`";
    md << " (method: " << r.blame.method << "; with that rule removed the case "
       << (r.blame.ablation == "pass"   ? "passes"
           : r.blame.ablation == "fail" ? "still fails"
                                        : "was not rerun")
       << ").\n\n";
    if (!r.blame.log.empty()) {
      md << "```\n";
      for (const auto& l : r.blame.log) md << l << "\n";
      md << "```\n\n";
    }
  } else {
    md << "Blame unavailable (method: " << r.blame.method << ").\n\n";
  }
  if (!r.minimization.is_null()) {
    md << "## Minimization\n\n```json\n" << r.minimization.dump(1) << "\n```\n\n";
  }
  md << "## Before\n\n```\n" << ToText(r.graph) << "```\n\n";
  Graph after;
  if (AfterGraph(r, &after)) {
    md << "## After the blamed rewrite\n\n```\n" << ToText(after) << "```\n\n";
  }
  md << "## Replay\n\n```sh\n" << r.Command("repro.json") << "\n```\n";
  return md.str();
}

}  // namespace fusefuzz
