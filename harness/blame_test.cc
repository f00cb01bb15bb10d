// Blame by disabling (targets without bisect): the rewrite that makes the case fail, not a
// rewrite that only enables it. ONNX Runtime's QDQS8ToU8Transformer turns an int8 QDQ conv into
// a uint8 one, which QDQSelectorActionTransformer then fuses without checking the bias scale:
// disabling either makes the case pass, but only the second is wrong.
#include "harness/blame.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The graph runs unoptimized on the embedded target. Optimized, it "applies" up to three
// rewrites in this order: `harmless` (changes nothing), `enabler` (changes nothing itself) and
// `culprit`, which adds 1 to every output but only fires after `enabler`.
class EnablerTarget final : public Target {
 public:
  EnablerTarget() : inner_(MakeEmbeddedTarget()) {
    caps_ = inner_->caps();
    caps_.name = "enabler";
    caps_.bisect_limit = false;
    caps_.disable = true;
    caps_.inject = false;
    caps_.reports_rewrites = true;
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "enabler"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    RunRequest plain = req;
    plain.optimize = false;
    plain.opt = OptimizeOptions{};
    TargetResult r = inner_->Run(g, inputs, plain);
    if (!req.optimize) return r;
    ++optimized_runs;
    const auto& off = req.opt.disable;
    const std::vector<std::string> n = {g.nodes.front().name};
    for (const char* rule : {"harmless", "enabler", "culprit"}) {
      if (Has(off, rule)) continue;
      if (std::string(rule) == "culprit" && Has(off, "enabler")) continue;
      r.rewrites.push_back(Rewrite{static_cast<int>(r.rewrites.size()) + 1, rule, n});
    }
    bool culprit = std::any_of(r.rewrites.begin(), r.rewrites.end(),
                               [](const Rewrite& w) { return w.rule == "culprit"; });
    if (culprit) {
      for (auto& [name, t] : r.outputs) {
        for (float& v : t.data) v += 1.0f;
      }
    }
    return r;
  }
  int optimized_runs = 0;

 private:
  std::unique_ptr<Target> inner_;
  TargetCaps caps_;
};

TEST(BlameByDisabling, BlamesTheRewriteThatFailsNotTheOneThatEnablesIt) {
  EnablerTarget target;
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})}, {MakeNode(Op::Relu, "relu", {"x"}, "y")}, {"y"});
  Rng rng(3);
  TensorMap inputs = RandInputs(rng, g, 1, 2);
  RefTensorMap ref = RunReference(g, inputs);
  CheckOptions opts;
  CaseOutcome out = CheckCase(target, g, inputs, ref, opts);
  ASSERT_EQ(out.kind, FindingKind::kFusion);
  ASSERT_EQ(out.run.rewrites.size(), 3u);
  target.optimized_runs = 0;
  Blame b = BlameFusion(target, g, inputs, ref, opts, out);
  EXPECT_EQ(b.method, "disable");
  // Disabling `enabler` alone passes too; the first rule whose removal passes was `enabler`.
  EXPECT_EQ(b.rule, "culprit");
  EXPECT_EQ(b.rewrite_index, 3);
  EXPECT_EQ(b.ablation, "pass");
  // Prefixes {harmless} and {harmless, enabler} pass, then `culprit` alone disabled passes;
  // then each earlier rule alone disabled: `harmless` still fails, `enabler` passes, so it is
  // named as having set the blamed rewrite up (issue 45, item 4).
  EXPECT_EQ(b.queries, 5);
  EXPECT_EQ(target.optimized_runs, 5);
  EXPECT_EQ(b.set_up_by, (std::vector<std::string>{"(2) enabler at relu"}));
  ASSERT_FALSE(b.log.empty());
  EXPECT_NE(b.log.back().find("culprit"), std::string::npos);
}

}  // namespace
}  // namespace fusefuzz::testing
