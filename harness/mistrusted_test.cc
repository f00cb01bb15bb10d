// MISTRUSTED is not a pass (issue 28, item 5): a rerun with the blamed rule disabled that the
// data cannot judge confirms nothing, blame by disabling does not count it as a pass, and the
// minimizer never shrinks a finding into such data (inputs and weights gone to zeros).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/blame.h"
#include "harness/minimize.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// A planted fusion bug behind a target interface: the graph runs unoptimized on the embedded
// target; an optimized run "applies" one rewrite `plus-one` that adds 1 to every output element,
// unless the rule is disabled or bisect_limit is 0.
class PlusOneTarget final : public Target {
 public:
  explicit PlusOneTarget(bool bisect) : inner_(MakeEmbeddedTarget()) {
    caps_ = inner_->caps();
    caps_.name = "plus-one";
    caps_.bisect_limit = bisect;
    caps_.disable = true;
    caps_.inject = false;
    caps_.reports_rewrites = true;
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "plus-one"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    RunRequest plain = req;
    plain.optimize = false;
    plain.opt = OptimizeOptions{};
    TargetResult r = inner_->Run(g, inputs, plain);
    const bool disabled = std::find(req.opt.disable.begin(), req.opt.disable.end(), "plus-one") !=
                          req.opt.disable.end();
    if (!req.optimize || disabled || req.opt.bisect_limit == 0) return r;
    for (auto& [name, t] : r.outputs) {
      for (float& v : t.data) v += 1.0f;
    }
    r.rewrites = {Rewrite{1, "plus-one", {g.nodes.front().name}}};
    return r;
  }

 private:
  std::unique_ptr<Target> inner_;
  TargetCaps caps_;
};

// Relu of inputs that are all negative: the reference is all zeros, so a correct answer is
// MISTRUSTED (nothing informative), and the planted +1 is a MISMATCH.
Graph ReluGraph() {
  return MakeGraph({In("x", {1, 2, 3, 3})}, {MakeNode(Op::Relu, "relu", {"x"}, "y")}, {"y"});
}

TEST(Mistrusted, DisabledRunThatCannotTellBlamesNoRule) {
  PlusOneTarget target(/*bisect=*/false);
  Graph g = ReluGraph();
  Rng rng(7);
  TensorMap inputs = RandInputs(rng, g, -2, -1);
  CheckOptions opts;
  RefTensorMap ref = RunReference(g, inputs);
  CaseOutcome out = CheckCase(target, g, inputs, ref, opts);
  ASSERT_EQ(out.kind, FindingKind::kFusion);
  ASSERT_EQ(out.unoptimized, Verdict::kMistrusted);
  Blame b = BlameFusion(target, g, inputs, ref, opts, out);
  EXPECT_EQ(b.method, "disable");
  EXPECT_EQ(b.rule, "") << "blamed on a rerun that the data cannot judge";
  // With informative inputs the same rerun passes and the rule is blamed.
  TensorMap good = RandInputs(rng, g, 1, 2);
  RefTensorMap good_ref = RunReference(g, good);
  CaseOutcome good_out = CheckCase(target, g, good, good_ref, opts);
  ASSERT_EQ(good_out.kind, FindingKind::kFusion);
  Blame gb = BlameFusion(target, g, good, good_ref, opts, good_out);
  EXPECT_EQ(gb.rule, "plus-one");
  EXPECT_EQ(gb.ablation, "pass");
}

TEST(Mistrusted, BisectAblationRecordsMistrusted) {
  PlusOneTarget target(/*bisect=*/true);
  Graph g = ReluGraph();
  Rng rng(8);
  TensorMap inputs = RandInputs(rng, g, -2, -1);
  CheckOptions opts;
  RefTensorMap ref = RunReference(g, inputs);
  CaseOutcome out = CheckCase(target, g, inputs, ref, opts);
  ASSERT_EQ(out.kind, FindingKind::kFusion);
  Blame b = BlameFusion(target, g, inputs, ref, opts, out);
  EXPECT_EQ(b.method, "bisect");
  EXPECT_EQ(b.rule, "plus-one");
  EXPECT_EQ(b.ablation, "mistrusted");
}

TEST(Mistrusted, MinimizerKeepsTheRuleDisabledRunInformative) {
  // Values shrink towards 0 (the cheapest value): without the informativeness condition the
  // minimized input is all zeros, where the planted +1 still fails but the rule-disabled run,
  // and the unoptimized one, are MISTRUSTED.
  PlusOneTarget target(/*bisect=*/true);
  // Relu -> Tanh: zero inputs give a zero reference, where nothing is informative.
  Graph g = MakeGraph(
      {In("x", {1, 3, 4, 4})},
      {MakeNode(Op::Relu, "relu", {"x"}, "r"), MakeNode(Op::Tanh, "tanh", {"r"}, "y")}, {"y"});
  Rng rng(9);
  Repro r;
  r.graph = g;
  r.inputs = RandInputs(rng, g, 0.5, 2);
  r.target = "plus-one";
  r.kind = FindingKind::kFusion;
  r.blame.rule = "plus-one";
  ReplayOutcome first = ReplayCase(r, r.graph, r.inputs, target);
  ASSERT_TRUE(first.same_finding);
  ASSERT_EQ(first.blame.ablation, "pass");
  MinimizeOptions mo;
  mo.budget_seconds = 0;
  mo.max_tests = 3000;
  MinimizeStats st;
  Repro m = Minimize(r, target, mo, &st);
  ASSERT_TRUE(st.reproduced) << st.note;
  EXPECT_GT(st.accepted, 0);
  ReplayOutcome again = ReplayCase(r, m.graph, m.inputs, target);
  EXPECT_TRUE(again.same_finding);
  EXPECT_EQ(again.blame.ablation, "pass");
  EXPECT_EQ(again.outcome.unoptimized, Verdict::kPass);
  EXPECT_EQ(m.blame.ablation, "pass");
}

}  // namespace
}  // namespace fusefuzz::testing
