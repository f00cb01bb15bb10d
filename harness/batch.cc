#include "harness/batch.h"

#include <charconv>
#include <set>

namespace fusefuzz {
namespace {

// One case's share of a batch's answers, served to CheckCase as if the target had run the case
// alone; any other request (other options, a timing run) goes to the target itself.
class BatchShareTarget final : public Target {
 public:
  BatchShareTarget(Target& target, const Graph& g, const RunRequest& batch,
                   const TargetResult* plain, const TargetResult* optimized)
      : target_(target), graph_(g), batch_(batch), plain_(plain), optimized_(optimized) {}
  const TargetCaps& caps() const override { return target_.caps(); }
  std::string spec() const override { return target_.spec(); }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    const TargetResult* share = req.optimize ? optimized_ : plain_;
    if (share && &g == &graph_ && SameOptions(req)) return *share;
    return target_.Run(g, inputs, req);
  }

 private:
  bool SameOptions(const RunRequest& req) const {
    const OptimizeOptions& a = req.opt;
    const OptimizeOptions& b = batch_.opt;
    return a.pipeline == b.pipeline && a.disable == b.disable && a.only == b.only &&
           a.inject == b.inject && a.bisect_limit == b.bisect_limit &&
           req.threads == batch_.threads && req.bench_runs == 0;
  }
  Target& target_;
  const Graph& graph_;
  RunRequest batch_;
  const TargetResult* plain_;
  const TargetResult* optimized_;
};

std::string Prefixed(size_t j, const std::string& name) { return BatchPrefix(j) + name; }

bool PassOrMistrusted(const CaseOutcome& o) {
  return o.verdict == Verdict::kPass || o.verdict == Verdict::kMistrusted;
}

}  // namespace

std::string BatchPrefix(size_t j) { return "b" + std::to_string(j) + "_"; }

std::optional<std::pair<size_t, std::string>> SplitBatchName(std::string_view name, size_t cases) {
  if (name.size() < 3 || name[0] != 'b') return std::nullopt;
  const size_t bar = name.find('_');
  if (bar == std::string_view::npos || bar < 2) return std::nullopt;
  // The canonical decimal only ("b01_x" is no case's name): one name, one case.
  if (name[1] == '0' && bar > 2) return std::nullopt;
  size_t j = 0;
  const char* first = name.data() + 1;
  const char* last = name.data() + bar;
  auto [end, ec] = std::from_chars(first, last, j);
  if (ec != std::errc() || end != last || j >= cases) return std::nullopt;
  return std::make_pair(j, std::string(name.substr(bar + 1)));
}

void JoinBatch(const std::vector<BatchCase>& cases, Graph* g, TensorMap* inputs) {
  *g = Graph{};
  inputs->clear();
  for (size_t j = 0; j < cases.size(); ++j) {
    const Graph& c = *cases[j].graph;
    for (const ValueInfo& v : c.inputs) g->inputs.push_back({Prefixed(j, v.name), v.shape});
    for (const Node& n : c.nodes) {
      Node m = n;
      m.name = Prefixed(j, n.name);
      m.output = Prefixed(j, n.output);
      for (std::string& in : m.inputs) in = Prefixed(j, in);
      g->nodes.push_back(std::move(m));
    }
    for (const std::string& out : c.outputs) g->outputs.push_back(Prefixed(j, out));
    g->options.allow_negative_scale |= c.options.allow_negative_scale;
    for (const auto& [name, t] : *cases[j].inputs) inputs->emplace(Prefixed(j, name), t);
  }
}

BatchSplit SplitBatchResult(const TargetResult& r, size_t cases) {
  BatchSplit s;
  s.runs.resize(cases);
  s.spanned.assign(cases, false);
  for (const auto& [name, t] : r.outputs) {
    if (auto c = SplitBatchName(name, cases)) s.runs[c->first].outputs.emplace(c->second, t);
  }
  for (const auto& [name, form] : r.node_forms) {
    if (auto c = SplitBatchName(name, cases)) s.runs[c->first].node_forms.emplace(c->second, form);
  }
  for (const std::string& name : r.backend_quantizes) {
    if (auto c = SplitBatchName(name, cases))
      s.runs[c->first].backend_quantizes.push_back(c->second);
  }
  for (const Rewrite& rw : r.rewrites) {
    std::set<size_t> owners;
    Rewrite own = rw;
    own.nodes.clear();
    for (const std::string& node : rw.nodes) {
      // A name the engine made (no case's prefix) stays as it is: it names no case.
      auto c = SplitBatchName(node, cases);
      if (c) owners.insert(c->first);
      own.nodes.push_back(c ? c->second : node);
    }
    if (owners.empty()) {
      s.unattributed.push_back(rw);
    } else if (owners.size() > 1) {
      ++s.spanning_rewrites;
      for (size_t j : owners) s.spanned[j] = true;
    } else {
      TargetResult& run = s.runs[*owners.begin()];
      own.index = static_cast<int>(run.rewrites.size()) + 1;
      run.rewrites.push_back(std::move(own));
    }
  }
  return s;
}

BatchOutcome CheckBatch(Target& target, const std::vector<BatchCase>& cases,
                        const CheckOptions& opts) {
  BatchOutcome b;
  b.cases.resize(cases.size());
  auto alone = [&](size_t j) {
    b.cases[j].alone = true;
    return CheckCase(target, *cases[j].graph, *cases[j].inputs, *cases[j].ref, opts);
  };
  // A bisect limit counts the rewrites of the whole joined graph: it means nothing per case.
  if (cases.size() < 2 || opts.opt.bisect_limit >= 0) {
    for (size_t j = 0; j < cases.size(); ++j) b.cases[j].outcome = alone(j);
    return b;
  }
  Graph g;
  TensorMap inputs;
  JoinBatch(cases, &g, &inputs);
  RunRequest req;
  req.opt = opts.opt;
  req.threads = opts.threads;
  req.cases = static_cast<int>(cases.size());
  const bool kernel_check = opts.kernel_check && !target.caps().limits.contains("unoptimized_run");
  TargetResult plain, optimized;
  if (kernel_check) {
    req.optimize = false;
    plain = target.Run(g, inputs, req);
    if (plain.status != RunStatus::kOk) b.batch_failure = "unoptimized run: " + plain.message;
  }
  if (b.batch_failure.empty()) {
    req.optimize = true;
    optimized = target.Run(g, inputs, req);
    if (optimized.status != RunStatus::kOk) b.batch_failure = "optimized run: " + optimized.message;
  }
  if (!b.batch_failure.empty()) {
    // Which case (if any) the failure was: each half as a batch again, down to single cases
    // checked alone, so that one case the target refuses costs about 2 log K calls, not K. A
    // failure no case explains (every case passes in a smaller batch or alone) is the batch's
    // own: every case of it is batch-only.
    const auto middle = cases.begin() + static_cast<std::ptrdiff_t>(cases.size() / 2);
    const std::string failure = b.batch_failure;
    b = BatchOutcome{};
    b.batch_failure = failure;
    bool explained = false;
    for (const std::vector<BatchCase>& half : {std::vector<BatchCase>(cases.begin(), middle),
                                               std::vector<BatchCase>(middle, cases.end())}) {
      BatchOutcome h = CheckBatch(target, half, opts);
      for (BatchedCase& c : h.cases) {
        explained |= !PassOrMistrusted(c.outcome);
        b.cases.push_back(std::move(c));
      }
      b.unattributed.insert(b.unattributed.end(), h.unattributed.begin(), h.unattributed.end());
      b.spanning_rewrites += h.spanning_rewrites;
    }
    if (!explained) {
      for (BatchedCase& c : b.cases) c.batch_only = true;
    }
    return b;
  }
  const BatchSplit plain_split =
      kernel_check ? SplitBatchResult(plain, cases.size()) : BatchSplit{};
  const BatchSplit opt_split = SplitBatchResult(optimized, cases.size());
  b.unattributed = opt_split.unattributed;
  b.spanning_rewrites = opt_split.spanning_rewrites + plain_split.spanning_rewrites;
  for (size_t j = 0; j < cases.size(); ++j) {
    const BatchCase& c = cases[j];
    BatchShareTarget share(target, *c.graph, req, kernel_check ? &plain_split.runs[j] : nullptr,
                           &opt_split.runs[j]);
    CaseOutcome judged = CheckCase(share, *c.graph, *c.inputs, *c.ref, opts);
    const bool spanned = opt_split.spanned[j] || (kernel_check && plain_split.spanned[j]);
    if (judged.verdict == Verdict::kPass && !spanned) {
      b.cases[j].outcome = std::move(judged);
      continue;
    }
    b.cases[j].outcome = alone(j);
    b.cases[j].batch_only = judged.finding() && !b.cases[j].outcome.finding();
  }
  return b;
}

}  // namespace fusefuzz
