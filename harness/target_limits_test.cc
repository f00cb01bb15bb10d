// A target that declares the hello limit "unoptimized_run" (an ONNX Runtime release that ignores
// the optimization level, docs/onnx.md "Testing another release") gets no kernel check: its
// "unoptimized" run is optimized too, so the optimized run is judged against the reference alone.
#include <gtest/gtest.h>

#include "harness/check.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// Every run, optimized or not, adds 1 to the outputs (as a release whose unoptimized session
// runs the same faulty fusion); counts its runs.
class AlwaysOptimizedTarget final : public Target {
 public:
  explicit AlwaysOptimizedTarget(bool declares) : inner_(MakeEmbeddedTarget()) {
    caps_ = inner_->caps();
    caps_.name = "always-optimized";
    if (declares) caps_.limits["unoptimized_run"] = "ignores the optimization level";
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "always-optimized"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    (req.optimize ? optimized_runs : unoptimized_runs)++;
    RunRequest plain = req;
    plain.optimize = false;
    TargetResult r = inner_->Run(g, inputs, plain);
    for (auto& [name, t] : r.outputs) {
      for (float& v : t.data) v += 1.0f;
    }
    return r;
  }
  int optimized_runs = 0, unoptimized_runs = 0;

 private:
  std::unique_ptr<Target> inner_;
  TargetCaps caps_;
};

TEST(TargetLimits, NoKernelCheckOnATargetWithoutAnUnoptimizedRun) {
  const Graph g =
      MakeGraph({In("x", {1, 2, 3, 3})}, {MakeNode(Op::Relu, "relu", {"x"}, "y")}, {"y"});
  Rng rng(3);
  const TensorMap inputs = RandInputs(rng, g, 1, 2);
  const RefTensorMap ref = RunReference(g, inputs);
  CheckOptions opts;
  opts.kernel_check = true;
  // Without the limit the wrong "unoptimized" run makes it a kernel finding ...
  AlwaysOptimizedTarget plain(false);
  EXPECT_EQ(CheckCase(plain, g, inputs, ref, opts).kind, FindingKind::kKernel);
  EXPECT_EQ(plain.unoptimized_runs, 1);
  // ... with it, only the optimized run is made and judged against the reference.
  AlwaysOptimizedTarget declared(true);
  const CaseOutcome out = CheckCase(declared, g, inputs, ref, opts);
  EXPECT_EQ(declared.unoptimized_runs, 0);
  EXPECT_EQ(declared.optimized_runs, 1);
  EXPECT_EQ(out.kind, FindingKind::kFusion);
}

}  // namespace
}  // namespace fusefuzz::testing
