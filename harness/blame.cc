#include "harness/blame.h"

#include <algorithm>

namespace fusefuzz {
namespace {

std::string NodesText(const std::vector<std::string>& nodes) {
  std::string s;
  for (const auto& n : nodes) s += (s.empty() ? "" : ",") + n;
  return s;
}

bool FailsWith(Target& target, const Graph& g, const TensorMap& inputs, const RefTensorMap& ref,
               const CheckOptions& opts, const CaseOutcome& failing, const OptimizeOptions& opt,
               int* queries, std::vector<Rewrite>* rewrites = nullptr) {
  ++*queries;
  CaseOutcome o = RunAndJudge(target, g, inputs, ref, opts, true, opt);
  if (rewrites) *rewrites = o.run.rewrites;
  return SameFailure(o, failing);
}

// What the rule-disabled run shows: "fail" (the same failure), "pass" (a PASS verdict), or the
// verdict it got instead in lower case ("mistrusted": the data cannot tell, which confirms
// nothing; "target_error" for another error, ...).
std::string AblationResult(const CaseOutcome& o, const CaseOutcome& failing) {
  if (SameFailure(o, failing)) return "fail";
  std::string v(VerdictName(o.verdict));
  for (char& c : v) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return v;
}

void Ablate(Target& target, const Graph& g, const TensorMap& inputs, const RefTensorMap& ref,
            const CheckOptions& opts, const CaseOutcome& failing, Blame& b) {
  if (b.rule.empty() || !target.caps().disable) return;
  OptimizeOptions opt = opts.opt;
  opt.bisect_limit = -1;
  // A fault is removed from `inject`; a rule is disabled.
  auto it = std::find(opt.inject.begin(), opt.inject.end(), b.rule);
  if (it != opt.inject.end()) {
    opt.inject.erase(it);
  } else {
    opt.disable.push_back(b.rule);
  }
  ++b.queries;
  b.ablation = AblationResult(RunAndJudge(target, g, inputs, ref, opts, true, opt), failing);
}

// Blame names the rewrite after which the case fails; when an earlier rewrite corrupted state that
// the blamed one reads, disabling the earlier rule clears the failure too (issue 45, item 4). Each
// of the first kMaxSetUpRules distinct earlier rules is rerun disabled alone; those that pass
// are recorded in b.set_up_by.
constexpr size_t kMaxSetUpRules = 3;

void FindSetUp(Target& target, const Graph& g, const TensorMap& inputs, const RefTensorMap& ref,
               const CheckOptions& opts, const CaseOutcome& failing,
               const std::vector<Rewrite>& applied, Blame& b) {
  if (b.rule.empty() || b.rewrite_index <= 1 || !target.caps().disable) return;
  std::vector<std::string> tried;
  for (const Rewrite& r : applied) {
    if (r.index >= b.rewrite_index || tried.size() >= kMaxSetUpRules) break;
    if (r.rule == b.rule || std::find(tried.begin(), tried.end(), r.rule) != tried.end()) continue;
    tried.push_back(r.rule);
    Blame probe;
    probe.rule = r.rule;
    Ablate(target, g, inputs, ref, opts, failing, probe);
    b.queries += probe.queries;
    if (probe.ablation != "pass") continue;
    b.set_up_by.push_back("(" + std::to_string(r.index) + ") " + r.rule +
                          (r.nodes.empty() ? "" : " at " + NodesText(r.nodes)));
    b.log.push_back("SETUP: with (" + std::to_string(r.index) + ") " + r.rule +
                    " disabled the case passes too: it set up what (" +
                    std::to_string(b.rewrite_index) + ") " + b.rule + " went wrong on");
  }
}

}  // namespace

Blame BlameFusion(Target& target, const Graph& g, const TensorMap& inputs, const RefTensorMap& ref,
                  const CheckOptions& opts, const CaseOutcome& failing) {
  Blame b;
  const TargetCaps& caps = target.caps();
  const std::vector<Rewrite>& applied = failing.run.rewrites;
  if (caps.bisect_limit) {
    b.method = "bisect";
    // Invariant: limit `lo` passes (0 rewrites = the graph as given, which the kernel check
    // judged), limit `hi` fails.
    int64_t lo = 0;
    int64_t hi = static_cast<int64_t>(applied.size());
    if (!caps.reports_rewrites) {
      // Unknown count: grow until failing (bounded).
      hi = 1;
      OptimizeOptions opt = opts.opt;
      while (true) {
        opt.bisect_limit = hi;
        if (FailsWith(target, g, inputs, ref, opts, failing, opt, &b.queries)) break;
        lo = hi;
        if (hi >= 4096) return b;
        hi *= 2;
      }
    }
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      OptimizeOptions opt = opts.opt;
      opt.bisect_limit = mid;
      if (FailsWith(target, g, inputs, ref, opts, failing, opt, &b.queries)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    if (hi < 1) return b;
    b.rewrite_index = static_cast<int>(hi);
    if (static_cast<size_t>(hi) <= applied.size()) {
      const Rewrite& r = applied[static_cast<size_t>(hi - 1)];
      b.rule = r.rule;
      b.nodes = r.nodes;
    }
    for (int64_t i = 1; i <= hi && static_cast<size_t>(i) <= applied.size(); ++i) {
      const Rewrite& r = applied[static_cast<size_t>(i - 1)];
      b.log.push_back("BISECT: applying rewrite (" + std::to_string(r.index) + ") " + r.rule +
                      (r.nodes.empty() ? "" : " at " + NodesText(r.nodes)));
    }
    b.log.push_back("BISECT: first failing rewrite is (" + std::to_string(hi) + ") " +
                    (b.rule.empty() ? "?" : b.rule));
    Ablate(target, g, inputs, ref, opts, failing, b);
    if (b.ablation == "pass") FindSetUp(target, g, inputs, ref, opts, failing, applied, b);
    return b;
  }
  if (failing.kind == FindingKind::kUnquantized && !caps.disable) {
    // Without bisect or disable (PyTorch's FX flows fuse inside prepare): the rewrite whose
    // fused nodes include the first node left unquantized, read off the reported rewrites.
    const std::vector<std::string> left = LeftUnquantized(failing.run);
    for (const Rewrite& r : applied) {
      if (left.empty() || std::find(r.nodes.begin(), r.nodes.end(), left.front()) == r.nodes.end())
        continue;
      b.method = "forms";
      b.rule = r.rule;
      b.nodes = r.nodes;
      b.rewrite_index = r.index;
      b.log.push_back("FORMS: '" + left.front() + "' ran in " +
                      std::string(NodeFormName(failing.run.node_forms.at(left.front()))) +
                      " form, fused by rewrite (" + std::to_string(r.index) + ") " + r.rule +
                      (r.nodes.empty() ? "" : " at " + NodesText(r.nodes)));
      return b;
    }
    return b;
  }
  if (caps.disable && caps.reports_rewrites) {
    b.method = "disable";
    // The rules in the order they first applied. The culprit is the first rule that, with
    // every later one disabled, makes the case fail: a rewrite that only enables it (ONNX
    // Runtime's QDQS8ToU8Transformer, or a Pad fused into the conv first, before the QDQ conv
    // fusion that drops the bias scale check) passes without its successors, so bisect and
    // disable blame the same rewrite. Confirmed by its ablation; else the first rule whose
    // removal alone makes the case pass.
    std::vector<const Rewrite*> order;
    std::vector<std::string> tried;
    for (const Rewrite& r : applied) {
      if (std::none_of(order.begin(), order.end(),
                       [&](const Rewrite* o) { return o->rule == r.rule; }))
        order.push_back(&r);
    }
    for (size_t k = 1; k <= order.size(); ++k) {
      bool fails = k == order.size();  // everything enabled: the failing run itself
      if (!fails) {
        OptimizeOptions opt = opts.opt;
        opt.bisect_limit = -1;
        for (size_t j = k; j < order.size(); ++j) opt.disable.push_back(order[j]->rule);
        fails = FailsWith(target, g, inputs, ref, opts, failing, opt, &b.queries);
      }
      if (!fails) continue;
      Blame probe;
      probe.rule = order[k - 1]->rule;
      Ablate(target, g, inputs, ref, opts, failing, probe);
      b.queries += probe.queries;
      if (probe.ablation == "pass") {
        b.rule = probe.rule;
        b.nodes = order[k - 1]->nodes;
        b.rewrite_index = order[k - 1]->index;
        b.ablation = "pass";
        b.log.push_back("DISABLE: with every rule after (" + std::to_string(b.rewrite_index) +
                        ") " + b.rule + " disabled the case still fails; with " + b.rule +
                        " alone disabled it passes");
        FindSetUp(target, g, inputs, ref, opts, failing, applied, b);
        return b;
      }
      tried.push_back(probe.rule);  // its removal alone does not pass: no need to try again
      break;
    }
    for (const Rewrite& r : applied) {
      if (std::find(tried.begin(), tried.end(), r.rule) != tried.end()) continue;
      tried.push_back(r.rule);
      Blame probe;
      probe.rule = r.rule;
      Ablate(target, g, inputs, ref, opts, failing, probe);
      b.queries += probe.queries;
      if (probe.ablation == "pass") {
        b.rule = r.rule;
        b.nodes = r.nodes;
        b.rewrite_index = r.index;
        b.ablation = "pass";
        return b;
      }
    }
  }
  return b;
}

}  // namespace fusefuzz
