#include "report/diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "optimizer/optimizer.h"
#include "report/markdown.h"

namespace fusefuzz {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The first line, cut at a word boundary when long (never mid-word).
std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > 200) {
    const size_t space = line.rfind(' ', 200);
    line = line.substr(0, space == std::string::npos || space < 120 ? 200 : space) + " ...";
  }
  return line;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> UnquantizedNodes(const Repro& r) {
  // harness/check.cc writes "... quantizes 'a' (float), 'b' (reference), which ran in ...".
  std::vector<std::pair<std::string, std::string>> nodes;
  const size_t from = r.detail.find("quantizes ");
  const size_t to = r.detail.find(", which ran in");
  if (r.kind != FindingKind::kUnquantized || from == std::string::npos || to == std::string::npos ||
      to < from) {
    return nodes;
  }
  const std::string list = r.detail.substr(from + 10, to - from - 10);
  size_t i = 0;
  while ((i = list.find('\'', i)) != std::string::npos) {
    const size_t end = list.find("' (", i + 1);
    if (end == std::string::npos) break;
    const size_t close = list.find(')', end);
    if (close == std::string::npos) break;
    nodes.push_back({list.substr(i + 1, end - i - 1), list.substr(end + 3, close - end - 3)});
    i = close + 1;
  }
  return nodes;
}

std::string BlameUnavailableReason(const Repro& r) {
  if (r.blame.method == "disable") {
    return "no reported rule makes the case pass when disabled alone, neither the first that "
           "fails with every later rule disabled nor any other: two rewrites may each be wrong "
           "here (a rule whose removal gives MISTRUSTED confirms nothing)";
  }
  if (r.blame.method == "bisect") return "the bisection found no first failing rewrite";
  if (r.kind == FindingKind::kKernel) return "a kernel finding has no rewrite to blame";
  // An engine build that cannot disable rules says why (an ORT release whose binding drops
  // session config entries): more than "takes neither bisect_limit nor disable".
  if (auto it = r.target_limits.find("disable"); it != r.target_limits.end()) return it->second;
  return "the target reports no rewrites it can withhold: it takes neither bisect_limit nor "
         "disable with reported rewrites (docs/target-protocol.md), so no single rewrite can be "
         "tested; the minimized graph is the evidence";
}

std::string Diagnosis(const Repro& r, const std::string& where) {
  std::string s;
  const bool has_worst = !r.worst.output.empty();
  const std::string values =
      has_worst ? "reference " + Num(r.worst.reference) + ", target " + Num(r.worst.candidate) : "";
  switch (r.kind) {
    case FindingKind::kFusion:
      if (r.blame.known()) {
        s = "after rewrite (" + std::to_string(r.blame.rewrite_index) + ") " + MdCode(r.blame.rule);
        for (size_t i = 0; i < r.blame.nodes.size(); ++i) {
          // A target names the nodes it rewrote; one the graph does not have (an engine's own
          // name, or a node an earlier rewrite made) is said to be so, never passed off as one.
          const std::string& name = r.blame.nodes[i];
          const bool known =
              r.graph.nodes.empty() || std::any_of(r.graph.nodes.begin(), r.graph.nodes.end(),
                                                   [&](const Node& n) { return n.name == name; });
          s += (i ? "," : " at ") + MdText(name) + (known ? "" : " (not a node of this graph)");
        }
        if (!r.blame.set_up_by.empty()) s += " (set up by " + MdText(r.blame.set_up_by[0]) + ")";
      } else {
        s = "the optimized run (no rewrite blamed)";
      }
      s += has_worst ? ", " + where + " diverges: " + values : " fails";
      break;
    case FindingKind::kKernel:
      s = "the unoptimized run already disagrees with the reference" +
          (has_worst ? " at " + where + ": " + values : std::string()) +
          ": a kernel bug, not a fusion bug";
      break;
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      s = "the " + (r.failing_run.empty() ? std::string("target's") : MdText(r.failing_run)) +
          " run " +
          (r.kind == FindingKind::kCrash     ? "crashed"
           : r.kind == FindingKind::kTimeout ? "timed out"
                                             : "failed") +
          (r.blame.rule.empty() ? "" : " after " + MdCode(r.blame.rule)) + ": " +
          MdText(FirstLine(r.detail));
      break;
    case FindingKind::kUnquantized: {
      // One sentence with every node named, never cut (issue 45, item 7).
      std::string nodes;
      for (const auto& [name, form] : UnquantizedNodes(r)) {
        nodes += (nodes.empty() ? "" : ", ") + MdCode(name) + " (" + MdText(form) + ")";
      }
      s = "the optimized run's numbers are right, but the backend's configuration promises " +
          (nodes.empty() ? std::string("some nodes") : nodes) +
          " in int8 and they ran in float or reference form" +
          (r.blame.rule.empty() ? std::string(" (no fusion blamed)")
                                : "; the fusion that left them so: " + MdCode(r.blame.rule));
      break;
    }
    case FindingKind::kNone:
      s = "no finding";
      break;
  }
  std::vector<std::string> faults = r.opt.inject;
  // A fault injected behind an external target (its own --inject) shows as the blamed rule.
  if (std::find(faults.begin(), faults.end(), r.blame.rule) == faults.end()) {
    faults.push_back(r.blame.rule);
  }
  for (const std::string& f : faults) {
    for (const RuleInfo& info : ListFaults()) {
      if (info.name == f) s += "; injected fault " + MdCode(f) + ": " + info.summary;
    }
  }
  return s + ".";
}

}  // namespace fusefuzz
