// Minimize: the reduction engine (reduce/) with "still the same finding" (ReplayCase:
// same kind, same blamed rule) as its interestingness test, on a target that counts its runs.
#include "harness/minimize.h"

#include <chrono>
#include <exception>
#include <optional>

#include "ir/error.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

class CountingTarget final : public Target {
 public:
  explicit CountingTarget(Target& inner) : inner_(inner) {}
  const TargetCaps& caps() const override { return inner_.caps(); }
  std::string spec() const override { return inner_.spec(); }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    ++runs;
    return inner_.Run(g, inputs, req);
  }
  int64_t runs = 0;

 private:
  Target& inner_;
};

// The finding as replay saw it; an input error (e.g. a candidate the reference refuses) is
// simply not the same finding. Anything else is a fusefuzz bug: counted (HarnessBug aborts in
// contract builds), never mistaken for a property of the case.
std::optional<ReplayOutcome> Replay(const Repro& expected, const ReduceCase& c, Target& t,
                                    int64_t* harness_errors) {
  try {
    return ReplayCase(expected, c.graph, c.inputs, t);
  } catch (const InputError&) {
    return std::nullopt;
  } catch (const std::exception& e) {
    HarnessBug(e, "minimizer replay");
    ++*harness_errors;
    return std::nullopt;
  }
}

int64_t Elements(const Graph& g, const TensorMap& inputs) {
  return SizeOf(ReduceCase{g, inputs}).elements;
}

}  // namespace

Repro Minimize(const Repro& r, Target& target, const MinimizeOptions& opts,
               MinimizeStats* stats_out) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  MinimizeStats local;
  MinimizeStats& st = stats_out ? *stats_out : local;
  st = MinimizeStats{};
  CountingTarget counting(target);

  st.nodes_before = st.nodes_after = static_cast<int64_t>(r.graph.nodes.size());
  st.elements_before = st.elements_after = Elements(r.graph, r.inputs);
  const ShapeSummary before = SummarizeShapes(r.graph);
  st.channels_before = st.channels_after = before.channels;
  st.height_before = st.height_after = before.height;
  st.width_before = st.width_after = before.width;
  auto finish = [&] {
    st.queries = counting.runs;
    st.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  };

  int64_t harness_errors = 0;
  std::optional<ReplayOutcome> last =
      Replay(r, ReduceCase{r.graph, r.inputs}, counting, &harness_errors);
  if (!last || !last->same_finding) {
    st.reproduced = false;
    st.note = !last
                  ? "replay failed with an error"
                  : "replay shows kind '" + std::string(FindingKindName(last->outcome.kind)) + "'" +
                        (last->outcome.kind == FindingKind::kFusion
                             ? " blamed on '" + last->blame.rule + "'"
                             : std::string()) +
                        ", not the recorded kind '" + std::string(FindingKindName(r.kind)) + "'" +
                        (r.kind == FindingKind::kFusion ? " blamed on '" + r.blame.rule + "'"
                                                        : std::string());
    if (last && last->outcome.kind == FindingKind::kNone) {
      st.note = "the case does not fail on replay (verdict " +
                std::string(VerdictName(last->outcome.verdict)) + ")";
    }
    finish();
    return r;
  }

  // The runs that make the finding informative stay informative: a candidate whose unoptimized
  // run, or whose rule-disabled run, became MISTRUSTED (weights or inputs shrunk to zeros, so
  // the data can no longer tell) would confirm nothing, though it still "fails".
  const bool keep_unoptimized_pass = last->outcome.unoptimized == Verdict::kPass;
  const bool keep_ablation_pass = last->blame.ablation == "pass";
  auto informative = [&](const ReplayOutcome& o) {
    return (!keep_unoptimized_pass || o.outcome.unoptimized == Verdict::kPass) &&
           (!keep_ablation_pass || o.blame.ablation == "pass");
  };

  ReduceOptions ro;
  if (opts.budget_seconds > 0) {
    ro.deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(opts.budget_seconds));
  }
  ro.max_tests = opts.max_tests;
  ro.verbose = opts.verbose;
  ReduceStats rs;
  auto interesting = [&](const ReduceCase& c) {
    std::optional<ReplayOutcome> o = Replay(r, c, counting, &harness_errors);
    if (!o || !o->same_finding || !informative(*o)) return false;
    last = std::move(o);
    return true;
  };
  ReduceCase result =
      Reduce(ReduceCase{r.graph, r.inputs}, DefaultReducePasses(), interesting, ro, &rs);

  Repro out = r;
  out.graph = std::move(result.graph);
  out.inputs = std::move(result.inputs);
  // The finding as the minimized case shows it (same kind and rule, new nodes and values).
  out.verdict = std::string(VerdictName(last->outcome.verdict));
  if (last->outcome.run.status == RunStatus::kOk) {
    out.worst = last->outcome.oracle.worst;
    out.detail = last->outcome.oracle.detail;
  } else {
    out.detail = last->outcome.run.message;
  }
  if (out.kind == FindingKind::kFusion || !out.blame.rule.empty()) out.blame = last->blame;

  finish();
  st.tests = rs.tests;
  st.accepted = rs.accepted;
  st.budget_exhausted = rs.stopped_early;
  st.nodes_after = static_cast<int64_t>(out.graph.nodes.size());
  st.elements_after = Elements(out.graph, out.inputs);
  const ShapeSummary after = SummarizeShapes(out.graph);
  st.channels_after = after.channels;
  st.height_after = after.height;
  st.width_after = after.width;
  // Only deterministic figures go into the file (no seconds), so that minimizing the same input
  // twice gives the same bytes whenever the fixpoint is reached within the budget.
  out.minimization = {{"nodes_before", st.nodes_before},
                      {"nodes_after", st.nodes_after},
                      {"elements_before", st.elements_before},
                      {"elements_after", st.elements_after},
                      {"queries", st.queries},
                      {"tests", st.tests},
                      {"accepted", st.accepted},
                      {"accepted_by_pass", rs.accepted_by_pass},
                      {"budget_exhausted", st.budget_exhausted}};
  if (harness_errors + rs.harness_errors > 0) {
    out.minimization["harness_errors"] = harness_errors + rs.harness_errors;
  }
  return out;
}

}  // namespace fusefuzz
