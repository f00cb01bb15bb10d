// The driver: pipeline construction, bounded fixed point, bisect gate, rewrite contracts.
#include "optimizer/optimizer.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "ir/error.h"
#include "ir/verifier.h"
#include "optimizer/bisect.h"
#include "optimizer/pipeline.h"
#include "optimizer/registry.h"
#include "optimizer/rewriter.h"

namespace fusefuzz {
namespace {

// A rule broke its contract: a bug in the rule, not in the input. Abort loudly, naming it.
[[noreturn]] void ContractViolation(const Rule& rule, const std::string& what) {
  std::cerr << "fusefuzz: rewrite contract violated by rule '" << rule.name() << "': " << what
            << "\n";
  std::abort();
}

struct DriverState {
  const OptimizeOptions& opts;
  BisectGate gate;
  OptimizeResult& result;
  int64_t next_index = 1;
  bool gate_closed = false;  // once a rewrite is refused, all later ones are too
};

// Applies `match` of `rule` to the graph. Every contract that is cheap is always checked; the
// expensive ones (graph changed, graph verifies) only with FUSEFUZZ_CONTRACTS.
class MutationForwarder final : public RewriteListener {
 public:
  MutationForwarder(const OptimizeOptions& opts, const Rewrite& rw) : opts_(opts), rw_(rw) {}
  void OnMutation(const Mutation& m) override { opts_.on_mutation(rw_, m); }

 private:
  const OptimizeOptions& opts_;
  const Rewrite& rw_;
};

void ApplyChecked(const Rule& rule, RuleMatch match, Graph& g, const OptimizeOptions& opts,
                  const Rewrite& rw) {
#ifdef FUSEFUZZ_CONTRACTS
  const Graph before = g;
#endif
  MutationForwarder forward(opts, rw);
  Rewriter rewriter(g, std::string(rule.name()), opts.on_mutation ? &forward : nullptr);
  rule.ApplyErased(std::move(match), rewriter);
  if (rewriter.mutations() == 0) ContractViolation(rule, "Apply made no mutation");
  std::string problem = rewriter.Commit();
  if (!problem.empty()) ContractViolation(rule, problem);
#ifdef FUSEFUZZ_CONTRACTS
  if (g == before) ContractViolation(rule, "Apply left the graph unchanged");
  try {
    VerifyGraph(g);
  } catch (const InputError& e) {
    ContractViolation(rule, std::string("graph does not verify after the rewrite: ") + e.what());
  }
#endif
}

// One stage over the graph: anchors in topological order; after an applied rewrite the sweep
// restarts from the first node (indices moved). Bounded, so a rule that keeps matching its own
// output cannot spin; the pipeline-level iteration limit bounds the rest.
bool RunStage(const Rule& rule, DriverState& st) {
  Graph& g = st.result.graph;
  const size_t cap = 16 + 4 * g.nodes.size();
  size_t applied = 0;
  bool changed = false;
  const RootOps roots = rule.roots();
  size_t i = 0;
  std::optional<MatchContext> ctx;  // reset after each applied rewrite (its caches)
  while (i < g.nodes.size()) {
    if (!roots.Has(g.nodes[i].op)) {
      ++i;
      continue;
    }
    if (!ctx) ctx.emplace(g);
    MatchResult m = rule.MatchErased(*ctx, static_cast<int>(i));
    if (!m.ok()) {
      ++i;
      continue;
    }
    Rewrite rw;
    rw.index = static_cast<int>(st.next_index++);
    rw.rule = std::string(rule.name());
    for (int n : m.match().nodes) rw.nodes.push_back(g.nodes.at(static_cast<size_t>(n)).name);
    if (st.gate_closed || !st.gate.ShouldApply(rw.index)) {
      st.gate_closed = true;
      ++st.result.skipped_by_bisect;
      if (st.opts.on_rewrite) st.opts.on_rewrite(rw, false);
      ++i;  // the graph is unchanged: move on, never retry this anchor
      continue;
    }
    // Told before the apply, so a log shows which rewrite was running if it crashes.
    if (st.opts.on_rewrite) st.opts.on_rewrite(rw, true);
    ctx.reset();
    ApplyChecked(rule, m.take(), g, st.opts, rw);
    st.result.rewrites.push_back(std::move(rw));
    changed = true;
    if (++applied >= cap) break;
    i = 0;
  }
  return changed;
}

}  // namespace

OptimizeResult Optimize(const Graph& g, const OptimizeOptions& opts) {
  return RunPipeline(g, BuildPipeline(opts), opts);
}

OptimizeResult RunPipeline(const Graph& g, const std::vector<const Rule*>& stages,
                           const OptimizeOptions& opts) {
  VerifyGraph(g);
  OptimizeResult result;
  result.graph = g;
  DriverState st{opts, BisectGate(opts.bisect_limit), result};
  result.reached_fixed_point = false;
  for (int iter = 0; iter < kMaxIterations; ++iter) {
    ++result.iterations;
    bool changed = false;
    for (const Rule* rule : stages) changed |= RunStage(*rule, st);
    // With the gate closed nothing more can be applied, and another sweep would only count the
    // same refused matches again: that is a fixed point too.
    if (!changed || st.gate_closed) {
      result.reached_fixed_point = true;
      break;
    }
  }
  return result;
}

const std::vector<RuleInfo>& ListRules() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> v;
    for (const Rule* r : AllRules())
      v.push_back({std::string(r->name()), std::string(r->summary())});
    return v;
  }();
  return infos;
}

const std::vector<RuleInfo>& ListFaults() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> v;
    for (const FaultInfo& f : AllFaults()) {
      v.push_back({std::string(f.rule->name()),
                   std::string(f.rule->summary()) + " [corrupts " + f.before + "]"});
    }
    return v;
  }();
  return infos;
}

}  // namespace fusefuzz
