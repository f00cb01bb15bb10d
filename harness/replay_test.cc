// ReplayCase's "same finding" for failures: an error keeps its class, a crash any signal.
#include <gtest/gtest.h>

#include "harness/minimize.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// Fails every optimized run with `message` as status `status`; the unoptimized run is the
// embedded target's.
class FailingTarget final : public Target {
 public:
  FailingTarget(RunStatus status, std::string message)
      : inner_(MakeEmbeddedTarget()), status_(status), message_(std::move(message)) {
    caps_ = inner_->caps();
    caps_.name = "failing";
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "failing"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    if (!req.optimize) return inner_->Run(g, inputs, req);
    TargetResult r;
    r.status = status_;
    r.message = message_;
    return r;
  }

 private:
  std::unique_ptr<Target> inner_;
  TargetCaps caps_;
  RunStatus status_;
  std::string message_;
};

Repro Recorded(FindingKind kind, const std::string& detail, Graph& g, TensorMap& inputs) {
  Rng rng(7);
  g = MakeGraph({In("x", {1, 2, 4, 4})}, {MakeNode(Op::Relu, "r", {"x"}, "y")}, {"y"});
  inputs = RandInputs(rng, g);
  Repro r;
  r.graph = g;
  r.inputs = inputs;
  r.kind = kind;
  r.detail = detail;
  r.failing_run = "optimized";
  return r;
}

constexpr const char* kAbort =
    "target exited with status 134 (from the shell: its program got signal 6 (Aborted)) while "
    "running the case";
constexpr const char* kSegv =
    "target exited with status 139 (from the shell: its program got signal 11 (Segmentation "
    "fault)) while running the case";

TEST(ReplayCase, ACrashIsTheSameFindingWhateverSignalEndsIt) {
  Graph g;
  TensorMap inputs;
  const Repro r = Recorded(FindingKind::kCrash, kAbort, g, inputs);
  FailingTarget segv(RunStatus::kCrash, kSegv);
  EXPECT_TRUE(ReplayCase(r, g, inputs, segv).same_finding);
  FailingTarget error(RunStatus::kError, kSegv);  // not a crash: another finding
  EXPECT_FALSE(ReplayCase(r, g, inputs, error).same_finding);
}

TEST(ReplayCase, ATargetErrorKeepsItsErrorClass) {
  Graph g;
  TensorMap inputs;
  const Repro r = Recorded(FindingKind::kTargetError, "ValueError: bad pads [1, 2]", g, inputs);
  FailingTarget same(RunStatus::kError, "ValueError: bad pads [3, 4]");
  EXPECT_TRUE(ReplayCase(r, g, inputs, same).same_finding);
  FailingTarget other(RunStatus::kError, "KeyError: bad pads [1, 2]");
  EXPECT_FALSE(ReplayCase(r, g, inputs, other).same_finding);
}

}  // namespace
}  // namespace fusefuzz::testing
