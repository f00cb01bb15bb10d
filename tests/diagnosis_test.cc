// report.md of a finding (issue 28, items 4 and 7): a one-sentence diagnosis at the top, a reason
// when nothing is blamed, and a run command that runs the finding's own target.
#include "report/diagnosis.h"

#include <gtest/gtest.h>

#include <string>

#include "report/finding_report.h"

namespace fusefuzz {
namespace {

Repro FusionRepro() {
  Repro r;
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  r.worst.output = "v5";
  r.worst.reference = -1;
  r.worst.candidate = 0;
  return r;
}

TEST(Diagnosis, BlamedRewriteWorstElementAndTheFaultsCatalogueLine) {
  Repro r = FusionRepro();
  r.opt.inject = {"bias-not-scaled"};
  r.blame.method = "bisect";
  r.blame.rule = "bias-not-scaled";
  r.blame.rewrite_index = 1;
  r.blame.nodes = {"conv", "bn"};
  const std::string d = Diagnosis(r, "`v5` at (0, 0, 1, 1)");
  EXPECT_EQ(d.rfind("after rewrite (1) `bias-not-scaled` at conv,bn, `v5` at (0, 0, 1, 1) "
                    "diverges: reference -1, target 0; injected fault `bias-not-scaled`: ",
                    0),
            0u)
      << d;
  const std::string md = FindingReport(r, "");
  EXPECT_NE(md.find("**Diagnosis:** after rewrite (1)"), std::string::npos) << md;
  // A fault injected behind an external target (not in r.opt.inject) is named by its blame,
  // once.
  r.opt.inject.clear();
  r.target = "exec:./target --inject bias-not-scaled";
  const std::string e = Diagnosis(r, "`v5` at (0, 0, 1, 1)");
  EXPECT_NE(e.find("; injected fault `bias-not-scaled`: Conv -> BatchNorm"), std::string::npos)
      << e;
  r.opt.inject = {"bias-not-scaled"};
  const std::string both = Diagnosis(r, "`v5` at (0, 0, 1, 1)");
  EXPECT_EQ(both.find("injected fault"), both.rfind("injected fault")) << both;
}

// Issue 44 item 7: the nodes a target says it rewrote were not checked against the graph.
TEST(Diagnosis, ARewrittenNodeTheGraphDoesNotHaveIsSaidToBeUnknown) {
  Repro r = FusionRepro();
  r.blame.method = "bisect";
  r.blame.rule = "SomeFusion";
  r.blame.rewrite_index = 1;
  r.blame.nodes = {"conv", "engine_internal_7"};
  Node conv;
  conv.name = "conv";
  r.graph.nodes.push_back(conv);
  const std::string d = Diagnosis(r, "`v5`");
  EXPECT_NE(d.find("at conv,engine_internal_7 (not a node of this graph)"), std::string::npos) << d;
  EXPECT_EQ(d.find("conv (not"), std::string::npos) << d;
}

TEST(Diagnosis, ExternalFindingSaysWhyNothingIsBlamedAndRunsItsTarget) {
  Repro r = FusionRepro();
  r.target = "exec:./my-compiler --fast";
  const std::string d = Diagnosis(r, "`v5` at (0, 0, 1, 1)");
  EXPECT_NE(d.find("the optimized run (no rewrite blamed)"), std::string::npos) << d;
  const std::string md = FindingReport(r, "");
  EXPECT_NE(md.find("Blame unavailable (method: none): the target reports no rewrites"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("fusefuzz run graph.json --inputs inputs.json --target 'exec:./my-compiler "
                    "--fast'"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("--engine optimized"), std::string::npos) << md;
}

// A finding on an ONNX Runtime release that cannot disable rules (issue 46): the report names
// the release and says why nothing could be blamed, not "Blame unavailable"; a repro.json keeps
// both through a write and a read.
TEST(Diagnosis, AReleaseThatCannotDisableSaysSoAndRecordsItsRelease) {
  Repro r = FusionRepro();
  r.target = "onnxruntime@1.20.1:all";
  r.engine = "onnxruntime-node 1.20.1";
  r.target_limits["disable"] =
      "onnxruntime-node 1.20.1's binding does not pass session config entries: blame by "
      "disabling is impossible on ORT 1.20.1";
  const std::string md = FindingReport(r, "");
  EXPECT_NE(md.find("- target: `onnxruntime@1.20.1:all` (onnxruntime-node 1.20.1)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Blame by disabling is impossible here: onnxruntime-node 1.20.1's binding"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("Blame unavailable"), std::string::npos) << md;
  // Read back from a file: a release need not be installed to read its finding.
  Repro file = ReadReproFile(std::string(FUSEFUZZ_SOURCE_DIR) +
                             "/corpus/onnxruntime/padfusion-ceil-mode-maxpool-shape.repro.json");
  file.target = r.target;
  file.engine = r.engine;
  file.target_limits = r.target_limits;
  const Repro back = ReadRepro(ReproToJson(file), "test");
  EXPECT_EQ(back.engine, r.engine);
  EXPECT_EQ(back.target_limits, r.target_limits);
  EXPECT_EQ(back.target, "onnxruntime@1.20.1:all");
}

}  // namespace
}  // namespace fusefuzz
