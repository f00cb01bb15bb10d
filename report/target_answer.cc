#include "report/target_answer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "ir/printers.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "report/finding_report.h"
#include "report/markdown.h"
#include "report/report_numbers.h"

namespace fusefuzz {
namespace {

std::string Fmt(double v) { return NumberText(v); }

std::string Short(double v) { return NumberText(v, 3); }

std::string RewriteText(const Rewrite& w) {
  std::string s = "(" + std::to_string(w.index) + ") " + w.rule;
  for (size_t i = 0; i < w.nodes.size(); ++i) s += (i ? "," : " at ") + w.nodes[i];
  return s;
}

}  // namespace

TargetAnswer AskTarget(Target& target, const Repro& r) {
  TargetAnswer a;
  a.optimized = r.kind != FindingKind::kKernel && r.failing_run != "unoptimized";
  RunRequest req;
  req.optimize = a.optimized;
  req.opt = r.opt;
  TargetResult res;
  try {
    res = target.Run(r.graph, r.inputs, req);
  } catch (const std::exception&) {
    return a;  // fusefuzz's own bad input: the report goes without the answer
  }
  a.rewrites = res.rewrites;  // an error answer may list the rewrites applied before it failed
  if (res.status == RunStatus::kOk) {
    a.ran = true;
    a.outputs = std::move(res.outputs);
  }
  if (target.caps().repro) {
    ReproducerCase c;
    c.title =
        std::string(FindingKindName(r.kind)) + (r.blame.rule.empty() ? "" : " " + r.blame.rule);
    // A finding that is not a wrong number (an error) has no failing output: none is sent.
    if (!r.worst.output.empty() && r.worst.index >= 0) {
      c.output = r.worst.output;
      c.index = r.worst.index;
    }
    c.reference = r.worst.reference;
    c.bound = r.worst.bound;
    c.oracle = std::string(OracleKindName(r.oracle.kind));
    try {
      for (auto& [name, t] : RunReference(r.graph, r.inputs)) c.expected[name] = ToFloatTensor(t);
      a.reproducer = target.AskReproducer(r.graph, r.inputs, req, c);
    } catch (const std::exception& e) {
      a.reproducer.message = std::string("no reproducer: ") + e.what();
    }
  }
  return a;
}

std::string TargetOutputSection(const Repro& r, const TargetAnswer& a) {
  std::ostringstream md;
  // The embedded optimizer's rewrites are in the bisection log and the after-graph already.
  if (!a.rewrites.empty() && !IsEmbeddedSpec(r.target)) {
    md << "## Rewrites the target reported\n\n"
       << (a.optimized ? "In the order it applied them, on the case above"
                       : "On the unoptimized run (none expected)")
       << " (the after picture draws them into the unoptimized graph: the target does not "
          "report the graph it ran):\n\n";
    for (const Rewrite& w : a.rewrites) md << "- " << MdCode(RewriteText(w)) << "\n";
    md << "\n";
  }
  if (!a.ran || r.worst.output.empty()) return md.str();
  auto got = a.outputs.find(r.worst.output);
  if (got == a.outputs.end()) return md.str();
  Tensor ref;
  try {
    int64_t total = 0;
    for (const auto& [v, s] : VerifyGraph(r.graph)) total += NumElements(s);
    if (total > kMaxElementsRun) return md.str();
    RefTensorMap all = RunReference(r.graph, r.inputs);
    auto it = all.find(r.worst.output);
    if (it == all.end()) return md.str();
    ref = ToFloatTensor(it->second);
  } catch (const std::exception&) {
    return md.str();
  }
  const Tensor& t = got->second;
  if (t.shape != ref.shape || t.data.size() != ref.data.size()) {
    md << "## The target's output " << MdCode(r.worst.output) << "\n\nThe target answered shape "
       << ShapeToString(t.shape) << " where the reference has " << ShapeToString(ref.shape)
       << ".\n\n";
    return md.str();
  }
  const size_t n = ref.data.size();
  auto diff = [&](size_t i) {
    const double d = std::fabs(double(t.data[i]) - double(ref.data[i]));
    return std::isnan(d) ? INFINITY : d;
  };
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  const bool whole = static_cast<int64_t>(n) <= kWholeOutput;
  if (!whole) {
    // The largest differences, then in element order.
    const size_t k = static_cast<size_t>(std::min<int64_t>(32, static_cast<int64_t>(n)));
    std::partial_sort(
        rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(k), rows.end(),
        [&](size_t x, size_t y) { return diff(x) > diff(y) || (diff(x) == diff(y) && x < y); });
    rows.resize(k);
    std::sort(rows.begin(), rows.end());
  }
  size_t off = 0;
  for (size_t i = 0; i < n; ++i) off += diff(i) > r.worst.bound ? 1 : 0;
  md << "## The target's output " << MdCode(r.worst.output) << "\n\n"
     << (whole ? "Every element" : "The " + std::to_string(rows.size()) + " largest differences")
     << " of " << ShapeToString(ref.shape) << ": the reference (double precision, shown as float) "
     << "next to what the target answered on its " << (a.optimized ? "optimized" : "unoptimized")
     << " run, asked again when this folder was written. " << off << " of " << n
     << " elements differ by more than the worst element's bound " << Fmt(r.worst.bound)
     << ".\n\n| element | reference | target | difference |\n|---|---:|---:|---:|\n";
  for (size_t i : rows) {
    md << "| " << Coordinates(static_cast<int64_t>(i), ref.shape) << " | " << Fmt(ref.data[i])
       << " | " << Fmt(t.data[i]) << " | " << Short(diff(i));
    if (static_cast<int64_t>(i) == r.worst.index) {
      md << " **worst**";
    } else if (diff(i) > r.worst.bound) {
      md << " off";
    }
    md << " |\n";
  }
  md << "\n";
  return md.str();
}

std::string ReportedRewritesDot(const Repro& r, const TargetAnswer& a, const std::string& note) {
  if (a.rewrites.empty() || IsEmbeddedSpec(r.target)) return "";
  DotOptions o;
  for (const Rewrite& w : a.rewrites) {
    const bool blamed = w.index == r.blame.rewrite_index && w.rule == r.blame.rule;
    for (const std::string& node : w.nodes) {
      if (!r.graph.FindNode(node)) continue;
      std::string& line = o.notes[node];
      line += (line.empty() ? "" : ", ") + ("(" + std::to_string(w.index) + ") " + w.rule);
      (blamed ? o.highlight : o.touched).insert(node);
    }
  }
  if (o.notes.empty()) return "";
  // Short: the picture is scaled to its title's width.
  o.title =
      "rewrites the target reported" + std::string(r.blame.rule.empty() ? "" : " (red: blamed)");
  o.failing_output = r.worst.output;
  o.failing_note = note;
  return ToDot(r.graph, o);
}

}  // namespace fusefuzz
