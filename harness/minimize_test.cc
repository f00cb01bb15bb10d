// Minimize end to end on the embedded target with injected faults: bigger failing cases (hand
// made with noise around the faulty pattern, and a generated one) shrink to the fault's pattern,
// keep the same finding, and shrink the same way twice.
#include "harness/minimize.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "generators/generator.h"
#include "ir/json_io.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// The finding of `g` with `fault` injected, as a reproducer would record it.
Repro FaultRepro(const Graph& g, const TensorMap& inputs, const std::string& fault,
                 Target& target) {
  Repro r;
  r.graph = g;
  r.inputs = inputs;
  r.opt.inject = {fault};
  r.kind = FindingKind::kFusion;
  r.blame.rule = fault;
  ReplayOutcome o = ReplayCase(r, g, inputs, target);
  EXPECT_TRUE(o.same_finding) << "the test case does not show " << fault << ": kind '"
                              << FindingKindName(o.outcome.kind) << "' rule '" << o.blame.rule
                              << "'";
  r.verdict = std::string(VerdictName(o.outcome.verdict));
  r.blame = o.blame;
  return r;
}

MinimizeOptions TestOptions() {
  MinimizeOptions o;
  o.budget_seconds = 0;  // bounded by max_tests instead, so both runs stop at the same point
  o.max_tests = 4000;
  return o;
}

std::vector<Op> Ops(const Graph& g) {
  std::vector<Op> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op);
  return ops;
}

// Conv -> Relu -> BatchNorm (Glow's bug) inside ten nodes of unrelated work.
Graph GlowCaseWithNoise(Rng& rng) {
  Node add = MakeNode(Op::Add, "add", {"b", "t"}, "s");
  Node pool = MakeNode(
      Op::MaxPool, "pool", {"s"}, "m",
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  Node mul = MakeNode(Op::Mul, "mul", {"t"}, "z", {}, {{"B", RandTensor(rng, {1, 8, 1, 1})}});
  return MakeGraph(
      {In("x", {2, 8, 10, 10})},
      {MakeConv(rng, "pre", "x", "p", 8, 8, 3, 1, true, 1), MakeNode(Op::Tanh, "tanh", {"p"}, "t"),
       MakeConv(rng, "conv", "t", "c", 8, 8, 3, 1, true, 1), MakeNode(Op::Relu, "relu", {"c"}, "r"),
       MakeBn(rng, "bn", "r", "b", 8), add, pool, MakeNode(Op::Sigmoid, "sig", {"m"}, "y"), mul,
       MakeNode(Op::LeakyRelu, "leaky", {"z"}, "w", {{"alpha", 0.1}})},
      {"y", "w"});
}

TEST(Minimize, GlowThroughActivationShrinksToConvReluBn) {
  Rng rng(101);
  Graph g = GlowCaseWithNoise(rng);
  TensorMap inputs = RandInputs(rng, g);
  auto target = MakeEmbeddedTarget();
  Repro r = FaultRepro(g, inputs, "through-activation", *target);
  MinimizeStats st;
  Repro m = Minimize(r, *target, TestOptions(), &st);
  ASSERT_TRUE(st.reproduced);
  EXPECT_FALSE(st.budget_exhausted);
  EXPECT_EQ(st.nodes_before, 10);
  EXPECT_EQ(Ops(m.graph), (std::vector<Op>{Op::Conv, Op::Relu, Op::BatchNorm}));
  EXPECT_EQ(st.nodes_after, 3);
  EXPECT_LT(st.elements_after, st.elements_before);
  EXPECT_EQ(st.channels_after, 1);
  EXPECT_GT(st.queries, st.tests);  // each replay costs several target runs
  EXPECT_TRUE(ReplayCase(r, m.graph, m.inputs, *target).same_finding);
  EXPECT_EQ(m.blame.rule, "through-activation");
  EXPECT_EQ(m.minimization.at("nodes_after"), 3);
  // Deterministic: the same input minimizes to the same bytes.
  Repro again = Minimize(r, *target, TestOptions());
  EXPECT_EQ(WriteRepro(m), WriteRepro(again));
}

TEST(Minimize, BiasNotScaledShrinksToConvBn) {
  Rng rng(102);
  Graph g = MakeGraph(
      {In("x", {1, 6, 9, 9})},
      {MakeNode(Op::Relu, "relu", {"x"}, "a"), MakeConv(rng, "conv", "a", "c", 6, 4, 3, 2, true, 1),
       MakeBn(rng, "bn", "c", "b", 4), MakeNode(Op::Sigmoid, "sig", {"b"}, "y"),
       MakeNode(Op::AvgPool, "pool", {"x"}, "p", {{"kernel_shape", std::vector<int64_t>{3, 3}}}),
       MakeNode(Op::Elu, "elu", {"p"}, "z")},
      {"y", "z"});
  TensorMap inputs = RandInputs(rng, g);
  auto target = MakeEmbeddedTarget();
  Repro r = FaultRepro(g, inputs, "bias-not-scaled", *target);
  MinimizeStats st;
  Repro m = Minimize(r, *target, TestOptions(), &st);
  ASSERT_TRUE(st.reproduced);
  EXPECT_EQ(Ops(m.graph), (std::vector<Op>{Op::Conv, Op::BatchNorm}));
  // The fault needs a bias that the BN scale changes: one channel, 1x1 kernel, no groups left.
  const Node& conv = m.graph.nodes[0];
  EXPECT_EQ(conv.params.at("W").shape, (Shape{1, 1, 1, 1}));
  EXPECT_NE(conv.params.at("B").data[0], 0.0f);
  EXPECT_TRUE(ReplayCase(r, m.graph, m.inputs, *target).same_finding);
}

TEST(Minimize, GeneratedCaseKeepsItsFinding) {
  // The first generated graph (of at least 5 nodes) among seeds 1..60 that shows the fault.
  auto target = MakeEmbeddedTarget();
  GenConfig cfg;
  const std::string fault = "bias-not-scaled";
  std::optional<Repro> r;
  for (uint64_t seed = 1; seed <= 60 && !r; ++seed) {
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    if (c.graph.nodes.size() < 5) continue;
    Repro probe;
    probe.graph = c.graph;
    probe.inputs = c.inputs;
    probe.opt.inject = {fault};
    probe.kind = FindingKind::kFusion;
    probe.blame.rule = fault;
    if (ReplayCase(probe, c.graph, c.inputs, *target).same_finding) r = probe;
  }
  ASSERT_TRUE(r.has_value()) << "no generated case in the scanned seeds shows " << fault;
  MinimizeStats st;
  Repro m = Minimize(*r, *target, TestOptions(), &st);
  ASSERT_TRUE(st.reproduced);
  EXPECT_LT(st.nodes_after, st.nodes_before);
  EXPECT_LE(st.nodes_after, 2);
  EXPECT_TRUE(ReplayCase(*r, m.graph, m.inputs, *target).same_finding);
}

TEST(Minimize, CaseThatDoesNotFailIsReturnedUnchanged) {
  Rng rng(104);
  // Conv -> BN without a conv bias: bias-not-scaled is invisible here.
  Graph g = MakeGraph(
      {In("x", {1, 3, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, false), MakeBn(rng, "bn", "c", "y", 4)}, {"y"});
  Repro r;
  r.graph = g;
  r.inputs = RandInputs(rng, g);
  r.opt.inject = {"bias-not-scaled"};
  r.kind = FindingKind::kFusion;
  r.blame.rule = "bias-not-scaled";
  auto target = MakeEmbeddedTarget();
  MinimizeStats st;
  Repro m = Minimize(r, *target, TestOptions(), &st);
  EXPECT_FALSE(st.reproduced);
  EXPECT_NE(st.note.find("does not fail"), std::string::npos) << st.note;
  EXPECT_EQ(WriteRepro(m), WriteRepro(r));
}

TEST(Minimize, NeverDriftsToAnotherRule) {
  // Two faults injected, each with its own pattern; minimizing the through-activation finding
  // must keep that pattern even though a Conv -> BN alone would fail too (bias-not-scaled).
  Rng rng(105);
  Graph g = GlowCaseWithNoise(rng);
  auto target = MakeEmbeddedTarget();
  Repro r = FaultRepro(g, RandInputs(rng, g), "through-activation", *target);
  r.opt.inject = {"through-activation", "bias-not-scaled"};
  ReplayOutcome o = ReplayCase(r, r.graph, r.inputs, *target);
  ASSERT_TRUE(o.same_finding) << o.blame.rule;
  Repro m = Minimize(r, *target, TestOptions());
  EXPECT_EQ(m.blame.rule, "through-activation");
  EXPECT_EQ(Ops(m.graph), (std::vector<Op>{Op::Conv, Op::Relu, Op::BatchNorm}));
}

TEST(MinimizeCommand, WritesTheSmallerReproAndReportsExitStatus) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("fusefuzz_minimize_cmd_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Rng rng(106);
  Graph g = GlowCaseWithNoise(rng);
  auto target = MakeEmbeddedTarget();
  Repro r = FaultRepro(g, RandInputs(rng, g), "through-activation", *target);
  const std::string in = (dir / "case.json").string(), out = (dir / "small.json").string();
  WriteFileAtomic(in, WriteRepro(r, in));
  auto run = [](const std::string& args) {
    int rc = std::system(
        (std::string(FUSEFUZZ_BINARY) + " minimize " + args + " >/dev/null 2>&1").c_str());
    return WEXITSTATUS(rc);
  };
  EXPECT_EQ(run(in + " -o " + out + " --budget 60"), 0);
  Repro m = ReadReproFile(out);
  EXPECT_EQ(m.graph.nodes.size(), 3u);
  EXPECT_EQ(m.blame.rule, "through-activation");
  // A case that passes: exit 1, nothing written.
  Repro pass = r;
  pass.opt.inject.clear();
  const std::string passing = (dir / "pass.json").string();
  WriteFileAtomic(passing, WriteRepro(pass, passing));
  EXPECT_EQ(run(passing + " -o " + (dir / "none.json").string()), 1);
  EXPECT_FALSE(fs::exists(dir / "none.json"));
  // A bad file: exit 2.
  WriteFileAtomic((dir / "bad.json").string(), "{\"format\": \"fusefuzz-graph\"}");
  EXPECT_EQ(run((dir / "bad.json").string()), 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz::testing
