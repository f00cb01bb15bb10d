#include "optimizer/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "optimizer/registry.h"
#include "optimizer/rewriter.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {
namespace {

// x -> conv -> bn -> relu -> maxpool, plus a dead branch and an identity: 5 rewrites by default.
Graph Block(Rng& rng) {
  Node pool = MakeNode(
      Op::MaxPool, "pool", {"r"}, "p",
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  return MakeGraph(
      {In("x", {1, 2, 6, 6})},
      {MakeNode(Op::Identity, "id", {"x"}, "xi"),
       MakeConv(rng, "conv", "xi", "c", 2, 4, 3, 1, true, 1), MakeBn(rng, "bn", "c", "b", 4),
       MakeNode(Op::Relu, "relu", {"b"}, "r"), pool, MakeNode(Op::Tanh, "dead", {"x"}, "unused"),
       MakeNode(Op::Identity, "out", {"p"}, "y")},
      {"y"});
}

std::vector<std::string> RuleNames(const std::vector<Rewrite>& rws) {
  std::vector<std::string> v;
  for (const auto& r : rws) v.push_back(r.rule);
  return v;
}

TEST(Pipeline, DefaultOrderAndNames) {
  std::vector<std::string> names;
  for (const auto& r : ListRules()) {
    names.push_back(r.name);
    EXPECT_FALSE(r.summary.empty()) << r.name;
    for (char ch : r.name) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == '-') << r.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"identity-elim",        "dead-node-elim",
                                             "qdq-pair-merge",       "qdq-maxpool-fold",
                                             "qdq-conv-bn-fold",     "quantize-activation-drop",
                                             "qdq-conv-fuse",        "pad-qconv-fold",
                                             "qdq-add-fuse",         "bn-bn-merge",
                                             "conv-bn-fold",         "bn-conv-fold",
                                             "conv-scale-fold",      "conv-shift-fold",
                                             "pad-conv-fold",        "pad-pool-fold",
                                             "matmul-add-fuse",      "gemm-bn-fold",
                                             "conv-add-fuse",        "conv-activation-fuse",
                                             "gemm-activation-fuse", "pool-activation-reorder"}));
  EXPECT_EQ(ListFaults().size(), AllFaults().size());
}

// docs/rules.md has one table row per rule, each file is where the docs say, and no row names a
// rule that does not exist (the doc drifted once: rules renamed, rows left behind).
TEST(Pipeline, DocsListEveryRule) {
  std::ifstream f(std::string(FUSEFUZZ_SOURCE_DIR) + "/docs/rules.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  ASSERT_FALSE(doc.empty()) << "docs/rules.md missing";
  std::set<std::string> rows;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t end = line.find('`', 3);
    if (end != std::string::npos) rows.insert(line.substr(3, end - 3));
  }
  for (const auto& r : ListRules()) {
    EXPECT_TRUE(rows.count(r.name)) << r.name << " has no row in docs/rules.md";
    std::string file = r.name;
    std::replace(file.begin(), file.end(), '-', '_');
    // Quantized rules live in optimizer/rules/quant/.
    const std::string dir = std::string(FUSEFUZZ_SOURCE_DIR) + "/optimizer/rules/";
    EXPECT_TRUE(std::filesystem::exists(dir + file + ".cc") ||
                std::filesystem::exists(dir + "quant/" + file + ".cc"))
        << r.name;
  }
  for (const auto& name : rows) {
    bool known = false;
    for (const auto& r : ListRules()) known |= r.name == name;
    EXPECT_TRUE(known) << "docs/rules.md has a row for unknown rule '" << name << "'";
  }
}

TEST(Pipeline, DefaultPipelineOptimizesTheBlock) {
  Rng rng(1);
  Graph g = Block(rng);
  OptimizeResult r = Optimize(g);
  EXPECT_EQ(RuleNames(r.rewrites),
            (std::vector<std::string>{"identity-elim", "identity-elim", "dead-node-elim",
                                      "conv-bn-fold", "conv-activation-fuse"}));
  ASSERT_EQ(r.graph.nodes.size(), 2u);
  EXPECT_EQ(r.graph.nodes[0].op, Op::FusedConv);
  EXPECT_EQ(r.graph.nodes[1].op, Op::MaxPool);
  EXPECT_EQ(r.graph.nodes[1].output, "y");
  EXPECT_TRUE(r.reached_fixed_point);
  EXPECT_EQ(r.iterations, 2);
  for (size_t i = 0; i < r.rewrites.size(); ++i) EXPECT_EQ(r.rewrites[i].index, int(i) + 1);
  ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "block");
}

TEST(Pipeline, DisableRemovesARule) {
  Rng rng(2);
  OptimizeOptions o;
  o.disable = {"conv-bn-fold"};
  OptimizeResult r = Optimize(Block(rng), o);
  EXPECT_EQ(CountOp(r.graph, Op::BatchNorm), 1);
  for (const auto& rw : r.rewrites) EXPECT_NE(rw.rule, "conv-bn-fold");
  // With conv-bn-fold gone the relu follows a BN, so pool-activation-reorder gets to fire.
  EXPECT_EQ(RuleNames(r.rewrites).back(), "pool-activation-reorder");
}

TEST(Pipeline, OnlyKeepsTheNamedRules) {
  Rng rng(3);
  OptimizeOptions o;
  o.only = {"dead-node-elim", "conv-bn-fold"};
  OptimizeResult r = Optimize(Block(rng), o);
  EXPECT_EQ(RuleNames(r.rewrites), (std::vector<std::string>{"dead-node-elim", "conv-bn-fold"}));
  EXPECT_EQ(CountOp(r.graph, Op::Identity), 2);
}

TEST(Pipeline, ExplicitPipelineOrder) {
  Rng rng(4);
  OptimizeOptions o;
  o.pipeline = {"conv-activation-fuse", "identity-elim"};
  OptimizeResult r = Optimize(Block(rng), o);
  EXPECT_EQ(RuleNames(r.rewrites),
            (std::vector<std::string>{"identity-elim", "identity-elim"}));  // BN blocks the fuse
}

TEST(Pipeline, UnknownNamesAreInputErrorsListingKnownNames) {
  Rng rng(5);
  Graph g = Block(rng);
  auto expect_error = [&](OptimizeOptions o, const std::string& where) {
    try {
      Optimize(g, o);
      ADD_FAILURE() << "no error for " << where;
    } catch (const InputError& e) {
      EXPECT_NE(e.where().find(where), std::string::npos) << e.what();
      EXPECT_NE(e.problem().find("'nope'"), std::string::npos) << e.what();
      EXPECT_NE(e.problem().find("conv-bn-fold"), std::string::npos) << e.what();
    }
  };
  OptimizeOptions o;
  o.pipeline = {"identity-elim", "nope"};
  expect_error(o, "pipeline[1]");
  o = {};
  o.disable = {"nope"};
  expect_error(o, "disable[0]");
  o = {};
  o.only = {"conv-bn-fold", "nope"};
  expect_error(o, "only[1]");
  o = {};
  o.inject = {"nope"};
  expect_error(o, "inject[0]");
  o = {};
  o.inject = {"conv-bn-fold"};  // a rule is not a fault
  EXPECT_THROW(Optimize(g, o), InputError);
}

TEST(Pipeline, InvalidGraphIsAnInputError) {
  Graph g = MakeGraph({In("x", {1, 2, 3, 3})}, {MakeNode(Op::Relu, "r", {"nowhere"}, "y")}, {"y"});
  EXPECT_THROW(Optimize(g), InputError);
}

TEST(Pipeline, BisectLimitZeroAppliesNothing) {
  Rng rng(6);
  Graph g = Block(rng);
  OptimizeOptions o;
  o.bisect_limit = 0;
  std::vector<std::pair<int, bool>> seen;
  o.on_rewrite = [&](const Rewrite& rw, bool applied) { seen.emplace_back(rw.index, applied); };
  OptimizeResult r = Optimize(g, o);
  EXPECT_TRUE(r.rewrites.empty());
  EXPECT_EQ(r.graph, g);
  EXPECT_GE(r.skipped_by_bisect, 1);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0], std::make_pair(1, false));
  EXPECT_EQ(static_cast<int64_t>(seen.size()), r.skipped_by_bisect);
}

TEST(Pipeline, BisectLimitNAppliesExactlyTheFirstN) {
  Rng rng(7);
  Graph g = Block(rng);
  OptimizeResult full = Optimize(g);
  const size_t total = full.rewrites.size();
  ASSERT_EQ(total, 5u);
  for (size_t n = 0; n <= total + 2; ++n) {
    OptimizeOptions o;
    o.bisect_limit = static_cast<int64_t>(n);
    int applied_calls = 0;
    o.on_rewrite = [&](const Rewrite&, bool applied) { applied_calls += applied ? 1 : 0; };
    OptimizeResult r = Optimize(g, o);
    const size_t want = std::min(n, total);
    ASSERT_EQ(r.rewrites.size(), want) << "limit " << n;
    EXPECT_EQ(applied_calls, static_cast<int>(want));
    for (size_t i = 0; i < want; ++i) {
      EXPECT_EQ(r.rewrites[i].index, full.rewrites[i].index);
      EXPECT_EQ(r.rewrites[i].rule, full.rewrites[i].rule);
      EXPECT_EQ(r.rewrites[i].nodes, full.rewrites[i].nodes);
    }
    EXPECT_EQ(r.skipped_by_bisect > 0, n < total) << "limit " << n;
    if (n >= total) {
      EXPECT_EQ(r.graph, full.graph);
    }
    VerifyGraph(r.graph);
    ExpectNumericAgreement(g, r.graph, RandInputs(rng, g), "limit " + std::to_string(n));
  }
}

TEST(Pipeline, MutationsAreReportedPerRewrite) {
  Rng rng(10);
  OptimizeOptions o;
  o.only = {"conv-bn-fold"};
  std::vector<std::string> log;
  o.on_mutation = [&](const Rewrite& rw, const Mutation& m) {
    log.push_back(std::to_string(rw.index) + " " + std::string(MutationKindName(m.kind)) + " " +
                  m.node);
  };
  Optimize(Block(rng), o);
  EXPECT_EQ(log, (std::vector<std::string>{"1 replace-node bn", "1 erase-node conv"}));
}

TEST(Pipeline, NumberingIsStableAcrossCalls) {
  Rng rng(8);
  Graph g = Block(rng);
  OptimizeResult a = Optimize(g), b = Optimize(g);
  ASSERT_EQ(a.rewrites.size(), b.rewrites.size());
  for (size_t i = 0; i < a.rewrites.size(); ++i) {
    EXPECT_EQ(a.rewrites[i].index, b.rewrites[i].index);
    EXPECT_EQ(a.rewrites[i].rule, b.rewrites[i].rule);
    EXPECT_EQ(a.rewrites[i].nodes, b.rewrites[i].nodes);
  }
  EXPECT_EQ(a.graph, b.graph);
  EXPECT_EQ(a.rewrites.front().index, 1);
}

// Test rules for the driver's bounds and contracts.
class Flip final : public TypedRule<NoData> {
 public:
  Flip(Op from, Op to, std::string name) : from_(from), to_(to), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Of({from_}); }
  Result Match(const MatchContext&, int a) const override { return MakeMatch({a}); }
  void Apply(Found m, Rewriter& rw) const override {
    Node n = rw.node(m.nodes[0]);
    n.op = to_;
    rw.ReplaceNode(m.nodes[0], n);
  }

 private:
  Op from_, to_;
  std::string name_;
};

TEST(Pipeline, OscillationIsBoundedByTheIterationLimit) {
  Flip a(Op::Relu, Op::Tanh, "relu-to-tanh"), b(Op::Tanh, Op::Relu, "tanh-to-relu");
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {MakeNode(Op::Relu, "r", {"x"}, "y")}, {"y"});
  OptimizeResult r = RunPipeline(g, {&a, &b}, {});
  EXPECT_EQ(r.iterations, kMaxIterations);
  EXPECT_FALSE(r.reached_fixed_point);
  EXPECT_EQ(r.rewrites.size(), 2u * kMaxIterations);
}

class AlwaysToggle final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "always-toggle"; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Of({Op::LeakyRelu}); }
  Result Match(const MatchContext&, int a) const override { return MakeMatch({a}); }
  void Apply(Found m, Rewriter& rw) const override {
    const double alpha = AttrFloat(rw.node(m.nodes[0]), "alpha");
    rw.SetAttr(m.nodes[0], "alpha", alpha == 0.1 ? 0.2 : 0.1);
  }
};

TEST(Pipeline, SelfMatchingRuleIsBoundedWithinAStage) {
  AlwaysToggle t;
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {MakeNode(Op::LeakyRelu, "r", {"x"}, "y")}, {"y"});
  OptimizeResult r = RunPipeline(g, {&t}, {});
  EXPECT_FALSE(r.reached_fixed_point);
  EXPECT_EQ(r.iterations, kMaxIterations);
  EXPECT_EQ(r.rewrites.size(), size_t(kMaxIterations) * (16 + 4 * 1));
}

class DoNothing final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "do-nothing"; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Any(); }
  Result Match(const MatchContext&, int a) const override { return MakeMatch({a}); }
  void Apply(Found, Rewriter&) const override {}
};

class EraseUsed final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "erase-used"; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Any(); }
  Result Match(const MatchContext&, int a) const override { return MakeMatch({a}); }
  void Apply(Found m, Rewriter& rw) const override { rw.EraseNode(m.nodes[0]); }
};

TEST(PipelineDeathTest, ApplyWithoutMutationAbortsNamingTheRule) {
  DoNothing d;
  Graph g = MakeGraph({In("x", {1, 1, 2, 2})}, {MakeNode(Op::Relu, "r", {"x"}, "y")}, {"y"});
  EXPECT_DEATH(RunPipeline(g, {&d}, {}), "rule 'do-nothing'.*no mutation");
}

TEST(PipelineDeathTest, ErasingAUsedValueAbortsNamingTheRule) {
  EraseUsed e;
  Graph g =
      MakeGraph({In("x", {1, 1, 2, 2})},
                {MakeNode(Op::Relu, "r", {"x"}, "a"), MakeNode(Op::Tanh, "t", {"a"}, "y")}, {"y"});
  EXPECT_DEATH(RunPipeline(g, {&e}, {}), "rule 'erase-used'.*still used");
}

#ifdef FUSEFUZZ_CONTRACTS
class BreakShape final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "break-shape"; }
  std::string_view summary() const override { return "test"; }
  RootOps roots() const override { return RootOps::Of({Op::Conv}); }
  Result Match(const MatchContext&, int a) const override { return MakeMatch({a}); }
  void Apply(Found m, Rewriter& rw) const override {
    rw.SetParam(m.nodes[0], "B", Tensor({7}, 0.0f));
  }
};

TEST(PipelineDeathTest, InvalidResultAbortsUnderContracts) {
  Rng rng(9);
  BreakShape b;
  Graph g = MakeGraph({In("x", {1, 2, 4, 4})}, {MakeConv(rng, "conv", "x", "y", 2, 2, 3)}, {"y"});
  EXPECT_DEATH(RunPipeline(g, {&b}, {}), "rule 'break-shape'.*does not verify");
}
#endif

TEST(Pipeline, InjectedFaultGoesBeforeTheRuleItCorrupts) {
  if (AllFaults().empty()) GTEST_SKIP() << "no faults registered";
  const FaultInfo& f = AllFaults().front();
  const std::string fault(f.rule->name());
  OptimizeOptions o;
  o.inject = {fault};
  std::vector<const Rule*> stages = BuildPipeline(o);
  ASSERT_EQ(stages.size(), AllRules().size() + 1);
  size_t at = 0;
  while (stages[at]->name() != fault) ++at;
  ASSERT_LT(at + 1, stages.size());
  EXPECT_EQ(stages[at + 1]->name(), f.before);
  // Disabling the corrupted rule keeps the fault; disabling the fault removes it.
  o.disable = {f.before};
  stages = BuildPipeline(o);
  EXPECT_EQ(stages.size(), AllRules().size());
  o.disable = {fault};
  EXPECT_EQ(BuildPipeline(o).size(), AllRules().size());
  // Not injected: a fault named in `only` does not run.
  OptimizeOptions only;
  only.only = {fault};
  EXPECT_TRUE(BuildPipeline(only).empty());
}

}  // namespace
}  // namespace fusefuzz::testing
