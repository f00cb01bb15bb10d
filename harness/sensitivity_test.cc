// Kernel sensitivity (harness/sensitivity.h): a kernel that fails on inputs within rounding of
// the case's is found; an exact one is not.
#include "harness/sensitivity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// Runs the reference in float32, except that its Relu is fragile: any input that is not a
// multiple of 2^-10 (the test inputs all are; rounding noise is not) makes it return 2x.
class FragileTarget final : public Target {
 public:
  explicit FragileTarget(bool fragile) : fragile_(fragile) { caps_.ops = {Op::Relu}; }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "fragile"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest&) override {
    ++runs;
    TargetResult r;
    bool off_grid = false;
    for (const auto& [name, t] : inputs) {
      for (float x : t.data) off_grid |= std::ldexp(x, 10) != std::nearbyint(std::ldexp(x, 10));
    }
    for (const auto& [name, t] : RunReference(g, inputs)) {
      Tensor out = ToFloatTensor(t);
      if (fragile_ && off_grid) {
        for (float& v : out.data) v = 2 * v + 1;
      }
      r.outputs[name] = out;
    }
    return r;
  }
  int runs = 0;

 private:
  TargetCaps caps_;
  bool fragile_;
};

Graph ReluGraph() {
  return MakeGraph({In("x", {1, 2, 4, 4})}, {MakeNode(Op::Relu, "relu", {"x"}, "y")}, {"y"});
}

TensorMap GridInputs() {
  Tensor x({1, 2, 4, 4});
  for (size_t i = 0; i < x.data.size(); ++i) {
    x.data[i] = static_cast<float>(static_cast<int>(i * 37 % 29) - 14) / 1024.0f * 37.0f;
  }
  return {{"x", x}};
}

TEST(KernelSensitivity, FindsAKernelThatRoundingBreaks) {
  FragileTarget target(true);
  CheckOptions opts;
  // The case itself passes on the unoptimized run...
  Graph g = ReluGraph();
  TensorMap in = GridInputs();
  CaseOutcome plain = RunAndJudge(target, g, in, RunReference(g, in), opts, false, opts.opt);
  ASSERT_EQ(plain.verdict, Verdict::kPass) << plain.oracle.detail;
  // ... but not within rounding of it: reported with the inputs that show it.
  std::optional<SensitiveKernel> s = FindKernelSensitivity(target, g, in, opts, 42);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->outcome.kind, FindingKind::kKernel);
  EXPECT_EQ(s->trial, 1);
  EXPECT_LE(s->relative, std::ldexp(1.0, -22));
  // Every perturbed element is within that relative size of the original (plus the rounding to
  // float32, at most 2^-24 relative), signs and zeros kept.
  const Tensor& a = in.at("x");
  const Tensor& b = s->inputs.at("x");
  ASSERT_EQ(a.data.size(), b.data.size());
  bool changed = false;
  for (size_t i = 0; i < a.data.size(); ++i) {
    EXPECT_LE(std::fabs(b.data[i] - a.data[i]),
              std::fabs(a.data[i]) * (s->relative + std::ldexp(1.0, -24)));
    EXPECT_EQ(std::signbit(a.data[i]), std::signbit(b.data[i]));
    changed |= a.data[i] != b.data[i];
  }
  EXPECT_TRUE(changed);
  // Deterministic in the seed.
  std::optional<SensitiveKernel> again = FindKernelSensitivity(target, g, in, opts, 42);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->inputs.at("x").data, b.data);
}

TEST(KernelSensitivity, AnExactKernelIsNotSensitive) {
  FragileTarget target(false);
  CheckOptions opts;
  EXPECT_FALSE(FindKernelSensitivity(target, ReluGraph(), GridInputs(), opts, 42).has_value());
  EXPECT_EQ(target.runs, 8);
}

}  // namespace
}  // namespace fusefuzz::testing
