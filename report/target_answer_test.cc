// The target's answer in report.md and the after picture of a target that does not report its
// graph (issue 28, item 4).
#include "report/target_answer.h"

#include <gtest/gtest.h>

#include "report/finding_report.h"

namespace fusefuzz {
namespace {

// x[1,1,1,2] -> Relu (act) -> Relu (act2) -> y, found by an external target.
Repro ExternalRepro() {
  Repro r;
  r.target = "exec:/bin/some-engine";
  r.graph.inputs = {{"x", {1, 1, 1, 2}}};
  Node a;
  a.name = "act";
  a.op = Op::Relu;
  a.inputs = {"x"};
  a.output = "h";
  Node b = a;
  b.name = "act2";
  b.inputs = {"h"};
  b.output = "y";
  r.graph.nodes = {a, b};
  r.graph.outputs = {"y"};
  r.inputs["x"] = Tensor({1, 1, 1, 2}, {-1.f, 2.f});
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  r.worst.output = "y";
  r.worst.index = 1;
  r.worst.reference = 2;
  r.worst.candidate = 5;
  r.worst.bound = 1e-6;
  return r;
}

TargetAnswer Answer() {
  TargetAnswer a;
  a.ran = true;
  a.outputs["y"] = Tensor({1, 1, 1, 2}, {0.f, 5.f});
  a.rewrites = {{1, "relu-relu-merge", {"act", "act2"}}, {2, "other", {"act2", "gone"}}};
  return a;
}

TEST(TargetAnswer, ReportShowsTheWholeFailingOutputNextToTheReference) {
  const Repro r = ExternalRepro();
  const TargetAnswer a = Answer();
  const std::string md = FindingReport(r, "", &a);
  EXPECT_NE(md.find("## The target's output `y`"), std::string::npos) << md;
  EXPECT_NE(md.find("1 of 2 elements differ"), std::string::npos) << md;
  EXPECT_NE(md.find("| (0, 0, 0, 0) | 0 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| (0, 0, 0, 1) | 2 | 5 | 3 **worst** |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `(1) relu-relu-merge at act,act2`"), std::string::npos) << md;
  // Without an answer: no such section.
  EXPECT_EQ(FindingReport(r).find("The target's output"), std::string::npos);
}

TEST(TargetAnswer, LargeOutputsShowTheLargestDifferences) {
  Repro r = ExternalRepro();
  const int64_t n = kWholeOutput + 4;
  r.graph.inputs = {{"x", {1, 1, 1, n}}};
  std::vector<float> x(static_cast<size_t>(n), 1.f);
  r.inputs["x"] = Tensor({1, 1, 1, n}, x);
  r.worst.index = 7;
  TargetAnswer a = Answer();
  std::vector<float> y = x;
  y[7] = 9.f;
  a.outputs["y"] = Tensor({1, 1, 1, n}, y);
  const std::string md = TargetOutputSection(r, a);
  EXPECT_NE(md.find("The 32 largest differences"), std::string::npos) << md;
  EXPECT_NE(md.find("| (0, 0, 0, 7) | 1 | 9 | 8 **worst** |"), std::string::npos) << md;
}

TEST(TargetAnswer, ReportedRewritesAreDrawnOnTheAfterSide) {
  Repro r = ExternalRepro();
  r.blame.rule = "relu-relu-merge";
  r.blame.rewrite_index = 1;
  const TargetAnswer a = Answer();
  const FindingDots d = MakeFindingDots(r, &a);
  ASSERT_FALSE(d.after.empty());
  EXPECT_NE(d.after.find("(1) relu-relu-merge, (2) other"), std::string::npos) << d.after;
  EXPECT_NE(d.after.find("#ff6060"), std::string::npos) << d.after;  // the blamed rewrite's nodes
  EXPECT_EQ(d.after.find("gone"), std::string::npos) << d.after;     // not a node of the graph
  // Nothing reported, or the embedded target (fusefuzz rebuilds its graph): no such picture.
  EXPECT_TRUE(MakeFindingDots(r, nullptr).after.empty());
  r.target = "embedded";
  EXPECT_EQ(ReportedRewritesDot(r, a, ""), "");
}

}  // namespace
}  // namespace fusefuzz
