#include "report/finding_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "generators/gen_config.h"
#include "ir/printers.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"
#include "report/diagnosis.h"
#include "report/integers_section.h"
#include "report/markdown.h"
#include "report/report_numbers.h"
#include "report/torch_script.h"

namespace fusefuzz {
namespace {

// Tensors up to this many elements are printed in full in the report and labeled in pictures;
// a minimized case is usually far below it, an unminimized one far above.
constexpr int64_t kSmallTensor = 32;
// Above this many elements in total (inputs + params), the report does not print values at
// all: a reader cannot use them, and the reference runs for the path would cost time.
constexpr int64_t kMaxValuesReported = 4096;

std::string Fmt(double v) { return NumberText(v); }

std::string Short(double v) { return NumberText(v, 6); }

// Nested brackets per dimension: [[0, 1], [2, 3]].
void Nested(const std::vector<float>& d, const Shape& s, size_t dim, int64_t& pos,
            std::ostringstream& o) {
  if (dim == s.size()) {
    o << Short(d[static_cast<size_t>(pos++)]);
    return;
  }
  o << "[";
  for (int64_t i = 0; i < s[dim]; ++i) {
    if (i) o << ", ";
    Nested(d, s, dim + 1, pos, o);
  }
  o << "]";
}

// A tensor's values when small, else a summary.
std::string Values(const Tensor& t) {
  std::ostringstream o;
  o << ShapeToString(t.shape) << " ";
  if (t.size() <= kSmallTensor) {
    int64_t pos = 0;
    if (t.shape.empty()) {
      o << Short(t.data.empty() ? 0.0 : t.data[0]);
    } else {
      Nested(t.data, t.shape, 0, pos, o);
    }
    return o.str();
  }
  double lo = INFINITY, hi = -INFINITY;
  for (float v : t.data) lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
  o << "(" << t.size() << " values in [" << Short(lo) << ", " << Short(hi) << "])";
  return o.str();
}

int64_t TotalElements(const Repro& r) {
  int64_t n = 0;
  for (const auto& [name, t] : r.inputs) n += t.size();
  for (const auto& node : r.graph.nodes) {
    for (const auto& [name, t] : node.params) n += t.size();
  }
  return n;
}

void NodeParams(const Node& n, std::ostringstream& md) {
  md << "- " << MdCode(n.name) << " (" << OpName(n.op) << ")";
  if (n.params.empty() && n.epilogue.empty()) md << ": no parameters";
  md << "\n";
  for (const auto& [name, t] : n.params) md << "  - " << name << " = " << Values(t) << "\n";
  for (size_t i = 0; i < n.epilogue.size(); ++i) {
    for (const auto& [name, t] : n.epilogue[i].params) {
      md << "  - epilogue step " << i << " " << name << " = " << Values(t) << "\n";
    }
  }
}

// The program of an exec: target's command, when it is a relative path (then it only resolves
// from the folder the campaign ran in).
std::string RelativeProgram(const std::string& target) {
  const std::optional<TargetSpec> spec = TargetSpec::Of(target);
  if (!spec || !spec->exec()) return "";
  std::istringstream is(spec->command());
  std::string prog;
  is >> prog;
  if (prog.empty() || prog[0] == '/' || prog.find('/') == std::string::npos) return "";
  return prog;
}

}  // namespace

std::optional<std::string> GenOptions(const nlohmann::json& config) {
  GenConfig def;
  if (config.is_null() || config == ConfigToJson(def)) return std::string();
  def.quant.enabled = true;
  if (config == ConfigToJson(def)) return std::string(" --quant");
  return std::nullopt;
}

std::string Coordinates(int64_t index, const Shape& shape) {
  const int64_t n = NumElements(shape);
  if (shape.empty() || index < 0 || index >= n) return "[" + std::to_string(index) + "]";
  std::vector<int64_t> c(shape.size());
  int64_t rest = index;
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = rest % shape[d];
    rest /= shape[d];
  }
  std::string out = "(";
  for (size_t d = 0; d < c.size(); ++d) out += (d ? ", " : "") + std::to_string(c[d]);
  return out + ")";
}

// The graph right after the blamed rewrite (embedded target only: external targets do not give
// us their graphs).
bool AfterGraph(const Repro& r, Graph* out) {
  if (!IsEmbeddedSpec(r.target) || r.blame.rewrite_index <= 0) return false;
  OptimizeOptions opt = r.opt;
  opt.bisect_limit = r.blame.rewrite_index;
  try {
    *out = Optimize(r.graph, opt).graph;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<PathValue> DivergencePath(const Repro& r, const Graph& after) {
  std::vector<PathValue> path;
  if (r.worst.output.empty()) return path;
  ShapeMap shapes;
  RefTensorMap before_vals, after_vals;
  try {
    shapes = VerifyGraph(r.graph);
    int64_t total = 0;
    for (const auto& [v, s] : shapes) total += NumElements(s);
    if (total > kMaxElementsRun) return path;
    before_vals = RunReference(r.graph, r.inputs, /*all_values=*/true);
    after_vals = RunReference(after, r.inputs, /*all_values=*/true);
  } catch (const std::exception&) {
    return {};
  }
  // Values the failing output depends on, walking producers back from it.
  std::set<std::string> needed = {r.worst.output};
  for (size_t i = r.graph.nodes.size(); i-- > 0;) {
    const Node& n = r.graph.nodes[i];
    if (!needed.count(n.output)) continue;
    for (const auto& in : n.inputs) needed.insert(in);
  }
  const Shape& out_shape = shapes[r.worst.output];
  auto add = [&](const std::string& v, const Node* producer) {
    if (!needed.count(v)) return;
    auto b = before_vals.find(v);
    auto a = after_vals.find(v);
    if (b == before_vals.end() || a == after_vals.end() || a->second.shape != b->second.shape) {
      return;
    }
    PathValue p;
    p.value = v;
    if (producer) p.producer = producer->name, p.op = std::string(OpName(producer->op));
    p.shape = b->second.shape;
    p.at_worst = p.shape == out_shape && r.worst.index >= 0 &&
                 static_cast<size_t>(r.worst.index) < b->second.value.size();
    if (p.at_worst) {
      p.before = b->second.value[static_cast<size_t>(r.worst.index)];
      p.after = a->second.value[static_cast<size_t>(r.worst.index)];
    }
    for (size_t i = 0; i < b->second.value.size(); ++i) {
      const double x = b->second.value[i], y = a->second.value[i];
      const double d = std::isnan(x) != std::isnan(y) ? INFINITY : std::fabs(x - y);
      if (!(d <= p.max_diff)) {
        if (std::isnan(x) && std::isnan(y)) continue;
        p.max_diff = d;
        p.max_diff_index = static_cast<int64_t>(i);
      }
      // Both runs are the double-precision reference, so legitimate reassociation moves a value
      // by a few double ulps of its magnitude; a change of the semantics moves it by far more.
      if (d > 0x1p-30 * b->second.mag[i] + 1e-300) p.diverges = true;
    }
    path.push_back(std::move(p));
  };
  for (const auto& in : r.graph.inputs) add(in.name, nullptr);
  for (const auto& n : r.graph.nodes) add(n.output, &n);
  return path;
}

namespace {

// The nodes within `hops` value edges (either direction) of `seeds`, as a graph of their own:
// values read from outside become its inputs, values read outside (or the graph's outputs) its
// outputs.
Graph Neighbourhood(const Graph& g, const std::set<std::string>& seeds, int hops,
                    const ShapeMap& shapes) {
  std::set<size_t> keep;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (seeds.count(g.nodes[i].name)) keep.insert(i);
  }
  for (int h = 0; h < hops; ++h) {
    std::set<std::string> touching;  // values produced or read by a kept node
    for (size_t i : keep) {
      touching.insert(g.nodes[i].output);
      touching.insert(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
    }
    std::set<size_t> next = keep;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      bool near = touching.count(n.output) > 0;
      for (const std::string& v : n.inputs) near |= touching.count(v) > 0;
      if (near) next.insert(i);
    }
    keep = std::move(next);
  }
  Graph sub;
  std::set<std::string> produced;
  for (size_t i : keep) produced.insert(g.nodes[i].output);
  std::set<std::string> inputs;
  for (size_t i : keep) {
    sub.nodes.push_back(g.nodes[i]);
    for (const std::string& v : g.nodes[i].inputs) {
      if (!produced.count(v) && inputs.insert(v).second) {
        auto it = shapes.find(v);
        sub.inputs.push_back({v, it == shapes.end() ? Shape{} : it->second});
      }
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep.count(i)) continue;
    for (const std::string& v : g.nodes[i].inputs) {
      if (produced.count(v) &&
          std::find(sub.outputs.begin(), sub.outputs.end(), v) == sub.outputs.end()) {
        sub.outputs.push_back(v);
      }
    }
  }
  for (const std::string& v : g.outputs) {
    if (produced.count(v) &&
        std::find(sub.outputs.begin(), sub.outputs.end(), v) == sub.outputs.end()) {
      sub.outputs.push_back(v);
    }
  }
  return sub;
}

// A target's one-line command, shown inside a ```sh block only when it cannot end the block or
// carry a control character into the page.
bool ShownInAFence(const std::string& line) {
  if (line.empty() || line.find('`') != std::string::npos) return false;
  return std::none_of(line.begin(), line.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

FindingDots MakeFindingDots(const Repro& r, const TargetAnswer* answer) {
  FindingDots dots;
  ShapeMap shapes;
  try {
    shapes = VerifyGraph(r.graph);
  } catch (const std::exception&) {
    shapes.clear();
  }
  const std::set<std::string> blamed(r.blame.nodes.begin(), r.blame.nodes.end());
  std::string note;
  if (!r.worst.output.empty()) {
    auto it = shapes.find(r.worst.output);
    note = "worst " + Coordinates(r.worst.index, it == shapes.end() ? Shape{} : it->second) +
           ": reference " + Short(r.worst.reference) + ", target " + Short(r.worst.candidate);
  }
  // Intermediate values label the edges too when they are tiny (reference, rounded to float).
  TensorMap values = r.inputs;
  try {
    if (TotalElements(r) <= kMaxValuesReported) {
      for (const auto& [name, t] : RunReference(r.graph, r.inputs, true))
        values.emplace(name, ToFloatTensor(t));
    }
  } catch (const std::exception&) {
  }
  DotOptions before;
  before.highlight = blamed;
  // An unquantized finding: the nodes that ran in float or reference form, marked.
  for (const auto& [name, form] : UnquantizedNodes(r)) {
    before.highlight.insert(name);
    before.notes[name] = "ran in " + form + " form, not int8";
  }
  before.title = std::string(!r.minimization.contains("nodes_after") ? "" : "minimized ") +
                 "graph, unoptimized: " + std::string(FindingKindName(r.kind)) +
                 (r.blame.rule.empty() ? "" : " blamed on " + r.blame.rule + " (red nodes)");
  before.failing_output = r.worst.output;
  before.failing_note = note;
  before.small_tensor = kSmallTensor;
  before.values = &values;
  dots.before = ToDot(r.graph, before);
  if (r.graph.nodes.size() > kNeighbourhoodNodes && !before.highlight.empty()) {
    const Graph near = Neighbourhood(r.graph, before.highlight, kNeighbourhoodHops, shapes);
    DotOptions n = before;
    n.title = "the blamed nodes (red) and their neighbours within " +
              std::to_string(kNeighbourhoodHops) + " edges: " + std::to_string(near.nodes.size()) +
              " of " + std::to_string(r.graph.nodes.size()) + " nodes; " + before.title;
    dots.neighbourhood = ToDot(near, n);
  }
  Graph after;
  if (AfterGraph(r, &after)) {
    TensorMap after_values = r.inputs;
    try {
      if (TotalElements(r) <= kMaxValuesReported) {
        for (const auto& [name, t] : RunReference(after, r.inputs, true))
          after_values.emplace(name, ToFloatTensor(t));
      }
    } catch (const std::exception&) {
    }
    DotOptions a;
    // In the after-graph, the blamed rewrite's result: nodes keeping a blamed name, and nodes
    // that did not exist before (a fused node gets a new name).
    for (const auto& n : after.nodes) {
      if (blamed.count(n.name) || !r.graph.FindNode(n.name)) a.highlight.insert(n.name);
    }
    a.title = "after rewrite (" + std::to_string(r.blame.rewrite_index) + ") " + r.blame.rule +
              " (red: its result)";
    a.failing_output = r.worst.output;
    a.failing_note = note;
    a.small_tensor = kSmallTensor;
    a.values = &after_values;
    dots.after = ToDot(after, a);
  } else if (answer) {
    dots.after = ReportedRewritesDot(r, *answer, note);
  }
  return dots;
}

std::string FindingReport(const Repro& r, const std::string& folder, const TargetAnswer* answer) {
  std::ostringstream md;
  ShapeMap shapes;
  try {
    shapes = VerifyGraph(r.graph);
  } catch (const std::exception&) {
    shapes.clear();
  }
  auto shape_of = [&](const std::string& v) {
    auto it = shapes.find(v);
    return it == shapes.end() ? Shape{} : it->second;
  };
  const std::string where =
      r.worst.output.empty()
          ? ""
          : MdCode(r.worst.output) + " at " + Coordinates(r.worst.index, shape_of(r.worst.output));

  md << "# Finding: " << FindingKindName(r.kind)
     << (r.blame.rule.empty() ? "" : " in " + MdCode(r.blame.rule)) << "\n\n";
  if (r.known_upstream.is_object()) {
    // Said first: a reader of a known bug's folder need not triage it again.
    const std::string link = r.known_upstream.value("link", "");
    const std::string doc = r.known_upstream.value("doc", "");
    md << "**Known upstream: " << MdText(link) << "** ("
       << MdText(r.known_upstream.value("title", "")) << (doc == link ? "" : "; " + MdText(doc))
       << "). Listed in corpus/known: counted as known, not new.\n\n";
  }
  md << "- verdict: **" << r.verdict << "**\n";
  md << "- target: " << MdCode(r.target);
  if (!r.opt.inject.empty()) {
    md << ", injected faults:";
    for (const auto& f : r.opt.inject) md << " " << MdCode(f);
  }
  if (!r.engine.empty()) md << " (" << MdText(r.engine) << ")";
  for (const auto& [name, why] : r.target_limits) {
    md << "\n- this engine build cannot: " << MdCode(name) << ": " << MdText(why);
  }
  md << "\n- oracle: `" << OracleKindName(r.oracle.kind) << "`"
     << (r.worst.on_grid && r.oracle.kind != OracleKind::kGrid
             ? " (integer outputs: `grid`, automatically)"
             : "")
     << "\n";
  if (!r.detail.empty()) md << "- detail: " << MdText(r.detail) << "\n";
  md << "\n**Diagnosis:** " << Diagnosis(r, where) << "\n";
  if (r.minimization.is_object() && r.minimization.contains("fresh_target") &&
      r.minimization["fresh_target"].is_string()) {
    md << "\n**Depends on earlier cases:** "
       << MdText(r.minimization["fresh_target"].get<std::string>()) << ".\n";
  }

  md << "\n## What went wrong\n\n";
  if (r.kind == FindingKind::kFusion) {
    md << "The graph computes different values after the optimizer than before it; the "
          "unoptimized run on the same target agrees with the reference, so a rewrite changed "
          "the semantics.";
  } else if (r.kind == FindingKind::kKernel) {
    md << "The target disagrees with the reference even without optimization: a kernel bug, "
          "not a fusion bug.";
  } else if (r.kind == FindingKind::kUnquantized) {
    md << "The numbers are right, but the model that ran is not the int8 model asked for: "
          "nodes the backend's configuration quantizes ran in float or reference form after "
          "the optimizer (marked in the pictures).";
  } else {
    md << "The target failed to produce outputs (" << FindingKindName(r.kind) << ").";
  }
  md << "\n\n";
  if (!r.worst.output.empty() && r.worst.on_grid) {
    // An integer element (the grid oracle): admitted integers and the excess, in steps.
    md << "Worst element: output " << where << ": reference integer " << Fmt(r.worst.reference)
       << ", target " << Fmt(r.worst.candidate)
       << "; the oracle admits |c - t| <= " << Fmt(r.worst.bound)
       << " steps (0.5 + E, t the unrounded grid position); see "
       << "\"Integers\" below.\n\n";
  } else if (!r.worst.output.empty()) {
    md << "Worst element: output " << where << ": reference " << Fmt(r.worst.reference)
       << ", target " << Fmt(r.worst.candidate)
       << "; the oracle allows |target - reference| <= " << Fmt(r.worst.bound) << ", this is "
       << Fmt(r.worst.ratio) << " times "
       << (r.oracle.kind == OracleKind::kBound   ? "u*magnitude"
           : r.oracle.kind == OracleKind::kSigma ? "the error scale sigma"
                                                 : "the tolerance")
       << ".\n\n";
  }

  if (answer) md << TargetOutputSection(r, *answer);
  if (!r.target_log.empty()) {
    md << "## Target's stderr (last lines)\n\n" << MdFence("", r.target_log) << "\n";
  }

  md << "## Blamed rewrite\n\n";
  if (r.blame.known()) {
    md << "Rewrite (" << r.blame.rewrite_index << ") " << MdCode(r.blame.rule) << " at";
    for (const auto& n : r.blame.nodes) md << " " << MdCode(n);
    md << " (method: " << r.blame.method << "; with that rule removed the case "
       << (r.blame.ablation == "pass"   ? "passes"
           : r.blame.ablation == "fail" ? "still fails"
           : r.blame.ablation == "not-run"
               ? "was not rerun"
               : "gives " + r.blame.ablation + ", which confirms nothing")
       << ").\n\n";
    if (!r.blame.set_up_by.empty()) {
      // The blamed rewrite read state an earlier one left wrong: the fix may belong there.
      md << "**Set up by** ";
      for (size_t i = 0; i < r.blame.set_up_by.size(); ++i) {
        md << (i ? ", " : "") << MdText(r.blame.set_up_by[i]);
      }
      md << ": with " << (r.blame.set_up_by.size() == 1 ? "that earlier rule" : "each of these")
         << " disabled alone the case passes too: it either only made the blamed rewrite "
            "possible, or corrupted state the blamed one reads (a shared weight scaled in place, "
            "a bias rounded on a stale grid), in which case the bug is there.\n\n";
    }
    if (!r.blame.log.empty()) {
      std::string log;
      for (const auto& l : r.blame.log) log += MdText(l) + "\n";
      md << MdFence("", log) << "\n";
    }
  } else {
    // Where the engine cannot disable rules at all, that is the whole story (no "unavailable").
    if (r.target_limits.contains("disable") && r.blame.method != "bisect" &&
        r.kind != FindingKind::kKernel) {
      md << "Blame by disabling is impossible here: " << MdText(BlameUnavailableReason(r))
         << ".\n\n";
    } else {
      md << "Blame unavailable (method: " << r.blame.method << "): " << BlameUnavailableReason(r)
         << ".\n\n";
    }
  }

  // What r.graph is: the minimizer's result, or the case as generated (crashes, --no-minimize).
  const std::string graph_name = !r.minimization.contains("nodes_after")
                                     ? "graph, unoptimized"
                                     : "minimized graph, unoptimized";
  Graph after;
  const bool has_after = AfterGraph(r, &after);
  const bool small = TotalElements(r) <= kMaxValuesReported;
  if (has_after && small) {
    const std::vector<PathValue> path = DivergencePath(r, after);
    if (!path.empty()) {
      md << "## Where the values diverge\n\n"
         << "Each value on the way to " << where
         << " that exists in both graphs, computed by the double-precision reference on the "
            "unoptimized graph and on the graph right after rewrite ("
         << r.blame.rewrite_index
         << "). Values at the worst element's coordinates when the shape allows; the last "
            "column is the largest difference anywhere in the tensor. The first value that "
            "diverges is the output of the rewritten nodes.\n\n"
         << "| value | produced by | shape | unoptimized | after rewrite | largest difference "
            "|\n|---|---|---|---:|---:|---|\n";
      bool first = true;
      for (const PathValue& p : path) {
        md << "| " << MdCode(p.value, true) << " | "
           << (p.producer.empty() ? "graph input" : MdCode(p.producer, true) + " " + p.op) << " | "
           << ShapeToString(p.shape) << " | " << (p.at_worst ? Fmt(p.before) : "-") << " | "
           << (p.at_worst ? Fmt(p.after) : "-") << " | " << Short(p.max_diff);
        if (p.max_diff > 0) md << " at " << Coordinates(p.max_diff_index, p.shape);
        if (p.diverges && first) {
          md << " **first divergence**";
          first = false;
        }
        md << " |\n";
      }
      md << "\nThe target's own result at " << where
         << " (all rewrites, float32 kernels): " << Fmt(r.worst.candidate) << ".\n\n";
    }
  }

  const Tensor* answered = nullptr;
  if (answer && answer->ran) {
    auto got = answer->outputs.find(r.worst.output);
    if (got != answer->outputs.end()) answered = &got->second;
  }
  md << IntegersSection(r, has_after ? &after : nullptr, answered);
  md << ClampBoundsSection(r.graph);

  if (small) {
    md << "## Input values\n\n";
    for (const auto& [name, t] : r.inputs) md << "- " << MdCode(name) << " = " << Values(t) << "\n";
    // Only when a node has parameters (a graph of QLinear ops keeps its own inline).
    if (std::any_of(r.graph.nodes.begin(), r.graph.nodes.end(),
                    [](const Node& n) { return !n.params.empty(); })) {
      md << "\n## Parameters, " << graph_name << "\n\n";
      for (const auto& n : r.graph.nodes) {
        if (!n.params.empty()) NodeParams(n, md);
      }
    }
    md << "\n";
    if (has_after) {
      md << "## Parameters of the rewritten nodes, after rewrite (" << r.blame.rewrite_index
         << ")\n\n";
      bool any = false;
      for (const auto& n : after.nodes) {
        const Node* old = r.graph.FindNode(n.name);
        if (old && *old == n) continue;  // untouched by the rewrites so far
        NodeParams(n, md);
        any = true;
      }
      if (!any) md << "No node changed.\n";
      md << "\n";
    }
  }

  md << "## " << static_cast<char>(std::toupper(graph_name[0])) << graph_name.substr(1) << "\n\n"
     << MdFence("", ToText(r.graph)) << "\n";
  if (has_after) {
    md << "## Graph right after rewrite (" << r.blame.rewrite_index << ") " << MdCode(r.blame.rule)
       << "\n\n"
       << MdFence("", ToText(after)) << "\n";
  }
  if (!r.minimization.is_null()) {
    md << "## Minimization\n\n" << MdFence("json", r.minimization.dump(1)) << "\n";
  }

  // The reproducer's path as the campaign was given it: a relative --out stays relative (to the
  // folder the campaign ran in, the checkout), so the commands carry no one's absolute paths
  // (issue 45, item 19); an absolute --out gives commands that work from anywhere.
  std::string repro = "repro.json";
  if (!folder.empty()) {
    repro = (std::filesystem::path(folder) / "repro.json").lexically_normal().string();
  }
  const std::string rq = ShellWord(repro);
  md << "## Commands\n\n";
  if (folder.empty()) {
    md << "From the finding folder.\n\n";
  } else if (std::filesystem::path(folder).is_relative()) {
    md << "From the folder the campaign ran in (the paths are relative to it).\n\n";
  }
  const std::string rel = RelativeProgram(r.target);
  if (!rel.empty()) {
    md << "The target's program " << MdCode(rel) << " is a relative path: run these from "
       << (r.working_dir.empty() ? "the folder the campaign ran in"
                                 : MdCode(r.working_dir) + ", where the campaign ran")
       << ", or replay with `--target` and an absolute path.\n\n";
  }
  md << "```sh\n";
  if (!rel.empty() && !r.working_dir.empty()) md << "cd " << ShellWord(r.working_dir) << "\n";
  // A recorded exec: target is a shell command from a file: replay runs it only when told to.
  const std::string trust = IsExecSpec(r.target) ? " --trust-target" : "";
  md << "# replay: exit 0 when the same finding happens again\n"
     << "fusefuzz replay " << rq << trust << "\n";
  if (!r.opt.inject.empty()) {
    md << "# confirm: without the injected faults the case passes\n"
       << "fusefuzz replay " << rq << trust << " --without-faults --expect pass\n";
  } else if (!r.blame.rule.empty()) {
    md << "# confirm: with the blamed rule disabled the case passes\n"
       << "fusefuzz replay " << rq << trust << " --disable " << ShellWord(r.blame.rule)
       << " --expect pass\n";
  }
  if (r.case_index >= 0 && (r.has_campaign_seed || r.has_seed)) {
    // The generator's options too: a --quant campaign's case is not the float generator's
    // (issue 45, item 6); any other config is written out of the repro and passed back.
    md << "# the original case, before minimization\n";
    const nlohmann::json config = r.generator.is_object() && r.generator.contains("config")
                                      ? r.generator["config"]
                                      : nlohmann::json();
    std::optional<std::string> gen = GenOptions(config);
    if (!gen) {
      md << "jq .provenance.generator.config " << rq << " > gen-config.json\n";
      gen = " --config gen-config.json";
    }
    if (r.has_campaign_seed) {
      md << "fusefuzz gen" << *gen << " --seed " << r.campaign_seed << " --case " << r.case_index
         << "\n";
    } else {
      md << "fusefuzz gen" << *gen << " --seed " << r.seed << "\n";
    }
  }
  md << "# the graph and its inputs as plain files, to run or edit\n"
     << "jq .graph " << rq << " > graph.json && jq .inputs " << rq << " > inputs.json\n"
     << "fusefuzz run graph.json --inputs inputs.json";
  // On the finding's own target: fusefuzz's optimizer (--engine) is not what failed for an
  // external one.
  if (IsEmbeddedSpec(r.target)) {
    md << " --engine optimized";
  } else {
    md << " --target " << ShellWord(r.target);
  }
  for (const auto& f : r.opt.inject) md << " --inject " << ShellWord(f);
  md << "\n```\n\n";
  // The finding folder holds the case as ONNX (finding_writer.cc): any ONNX tool replays it.
  const std::string dir =
      folder.empty() ? "." : ShellWord(std::filesystem::path(repro).parent_path().string());
  if (!TorchReproScript(r).empty()) {
    md << "Without fusefuzz: `reproduce.py` holds the graph as a plain `nn.Module` with its "
          "weights and the case's inputs, runs the mode's optimized and unoptimized runs with "
          "torch alone and exits 1 while the bug is there:\n\n```sh\n/usr/bin/python3 "
       << dir << "/reproduce.py\n```\n\n";
  }
  md << "## The case as ONNX\n\n"
     << "The folder is in ONNX's backend-test layout: `model.onnx` (opset 17, docs/onnx.md) and "
        "`test_data_set_0/` (inputs and reference outputs as TensorProto files), for any ONNX "
        "tool (docs/onnx.md runs it in a built-in engine). Outputs a tool wrote as TensorProto "
        "files into a folder OUT are judged by fusefuzz's oracle:\n\n```sh\n"
     << "fusefuzz compare " << rq << " --inputs-pb " << dir << "/test_data_set_0 --outputs OUT\n"
     << "```\n";
  // The target's own reproducer (capability repro): named with the command its pack gave.
  if (answer && !answer->reproducer.files.empty()) {
    std::string names;
    for (const ReproducerFile& f : answer->reproducer.files) {
      names += (names.empty() ? "" : ", ") + MdCode(f.path);
    }
    md << "\nWithout fusefuzz: the target wrote a standalone reproducer (" << names
       << ") that runs the case with the engine alone, prints the engine's value next to the "
          "reference and exits 1 while the bug is there (0 when it is gone, 2 when the engine "
          "fails). In the finding folder:\n\n```sh\ncd "
       << dir << "\n"
       << (ShownInAFence(answer->reproducer.build) ? answer->reproducer.build
                                                   : "# (the target gave no command to show)")
       << "\n```\n";
  }
  return md.str();
}

}  // namespace fusefuzz
