// Several cases per target call (harness/batch.h): names joined and split without collisions,
// each case judged as if alone, and a failure of the batch never filed as a case's finding.
#include "harness/batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "generators/generator.h"

namespace fusefuzz {
namespace {

struct Case {
  GeneratedCase gen;
  RefTensorMap ref;
};

std::vector<Case> Generate(uint64_t first_seed, size_t n) {
  std::vector<Case> cases(n);
  for (size_t i = 0; i < n; ++i) {
    cases[i].gen = GenerateFromSeed(first_seed + i, GenConfig{});
    cases[i].ref = RunReference(cases[i].gen.graph, cases[i].gen.inputs);
  }
  return cases;
}

std::vector<BatchCase> Batch(const std::vector<Case>& cases) {
  std::vector<BatchCase> b;
  for (const Case& c : cases) b.push_back({&c.gen.graph, &c.gen.inputs, &c.ref});
  return b;
}

bool JoinsTwoCases(const Graph& g) {
  return std::any_of(g.inputs.begin(), g.inputs.end(),
                     [](const ValueInfo& v) { return v.name.rfind("b1_", 0) == 0; });
}

// The embedded target, misbehaving only on graphs that join two cases or more: `wrong` adds 1 to
// the first output, `error` answers an error, `span` reports a rewrite over two cases' nodes,
// `anonymous` reports a rewrite naming no node.
class BatchFaultTarget final : public Target {
 public:
  enum class Fault { kNone, kWrong, kError, kSpan, kAnonymous, kRefuseMarked };
  explicit BatchFaultTarget(Fault fault) : inner_(MakeEmbeddedTarget()), fault_(fault) {
    caps_ = inner_->caps();
    caps_.batch_cases = 8;
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "batch-fault"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    ++calls;
    max_cases = std::max(max_cases, req.cases);
    if (fault_ == Fault::kRefuseMarked) {
      for (const ValueInfo& v : g.inputs) {
        if (v.name.ends_with("refuse_me")) {
          TargetResult u;
          u.status = RunStatus::kUnsupported;
          u.message = "target: unsupported: " + v.name;
          return u;
        }
      }
    }
    TargetResult r = inner_->Run(g, inputs, req);
    if (!JoinsTwoCases(g) || !req.optimize) return r;
    switch (fault_) {
      case Fault::kNone:
        break;
      case Fault::kWrong:
        for (float& x : r.outputs.at(g.outputs.front()).data) x += 1;
        break;
      case Fault::kError: {
        TargetResult e;
        e.status = RunStatus::kError;
        e.message = "target error: joined graphs refused";
        return e;
      }
      case Fault::kSpan:
        r.rewrites.push_back({0, "span", {g.nodes.front().name, g.nodes.back().name}});
        break;
      case Fault::kAnonymous:
        r.rewrites.push_back({0, "anonymous", {}});
        break;
      case Fault::kRefuseMarked:
        break;
    }
    return r;
  }
  int calls = 0;
  int max_cases = 0;

 private:
  std::unique_ptr<Target> inner_;
  Fault fault_;
  TargetCaps caps_;
};

TEST(BatchNames, PrefixAndSplit) {
  EXPECT_EQ(BatchPrefix(0), "b0_");
  EXPECT_EQ(BatchPrefix(12), "b12_");
  auto s = SplitBatchName("b12_conv_1", 13);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->first, 12u);
  EXPECT_EQ(s->second, "conv_1");
  EXPECT_FALSE(SplitBatchName("b12_conv_1", 12));  // no such case
  EXPECT_FALSE(SplitBatchName("b01_x", 8));        // not the canonical decimal
  EXPECT_FALSE(SplitBatchName("b_x", 8));
  EXPECT_FALSE(SplitBatchName("bx_1", 8));
  EXPECT_FALSE(SplitBatchName("x", 8));
  EXPECT_FALSE(SplitBatchName("", 8));
  EXPECT_FALSE(SplitBatchName("b99999999999999999999999_x", 8));  // overflow
  auto empty_rest = SplitBatchName("b0_", 1);
  ASSERT_TRUE(empty_rest);
  EXPECT_EQ(empty_rest->second, "");
}

// A case whose names look like another case's prefix, and names no tool would choose: every
// name comes back to its own case, unchanged.
TEST(BatchNames, CollidingAndHostileNamesRoundTrip) {
  std::vector<Case> cases = Generate(7, 2);
  const std::vector<std::string> hostile = {"b1_x", "b0_b1_", "a\"b\\c\nd", "\xc3\xa9t\xc3\xa9",
                                            "b1_"};
  Graph& g0 = cases[0].gen.graph;
  // Rename case 0's first input and each node's output to the hostile names, in turn.
  auto rename = [&g0, &cases](const std::string& from, const std::string& to) {
    for (ValueInfo& v : g0.inputs) v.name = v.name == from ? to : v.name;
    for (Node& n : g0.nodes) {
      n.output = n.output == from ? to : n.output;
      for (std::string& in : n.inputs) in = in == from ? to : in;
    }
    for (std::string& o : g0.outputs) o = o == from ? to : o;
    TensorMap& in = cases[0].gen.inputs;
    if (auto it = in.find(from); it != in.end()) {
      Tensor t = it->second;
      in.erase(it);
      in.emplace(to, std::move(t));
    }
  };
  std::vector<std::string> values = {g0.inputs.front().name};
  for (const Node& n : g0.nodes) values.push_back(n.output);
  for (size_t i = 0; i < values.size() && i < hostile.size(); ++i) rename(values[i], hostile[i]);
  for (size_t i = 0; i < g0.nodes.size() && i < hostile.size(); ++i) g0.nodes[i].name = hostile[i];
  cases[0].ref = RunReference(g0, cases[0].gen.inputs);

  Graph joined;
  TensorMap inputs;
  JoinBatch(Batch(cases), &joined, &inputs);
  std::set<std::string> names;
  for (const ValueInfo& v : joined.inputs) EXPECT_TRUE(names.insert(v.name).second) << v.name;
  for (const Node& n : joined.nodes) EXPECT_TRUE(names.insert(n.output).second) << n.output;
  EXPECT_EQ(inputs.size(), joined.inputs.size());

  std::unique_ptr<Target> embedded = MakeEmbeddedTarget();
  RunRequest req;
  req.optimize = true;
  TargetResult r = embedded->Run(joined, inputs, req);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  BatchSplit split = SplitBatchResult(r, 2);
  for (size_t j = 0; j < 2; ++j) {
    const Graph& g = cases[j].gen.graph;
    ASSERT_EQ(split.runs[j].outputs.size(), g.outputs.size());
    for (const std::string& o : g.outputs) EXPECT_TRUE(split.runs[j].outputs.count(o)) << o;
    for (const Rewrite& rw : split.runs[j].rewrites) {
      for (const std::string& n : rw.nodes) EXPECT_TRUE(g.FindNode(n)) << n;
    }
  }
  EXPECT_EQ(split.spanning_rewrites, 0);
  // And judged in the batch, both pass as they do alone.
  BatchFaultTarget target(BatchFaultTarget::Fault::kNone);
  BatchOutcome b = CheckBatch(target, Batch(cases), CheckOptions{});
  for (const BatchedCase& c : b.cases) {
    EXPECT_EQ(c.outcome.verdict, Verdict::kPass) << c.outcome.oracle.detail;
    EXPECT_FALSE(c.alone);
  }
}

// With a planted fault, a batch of 24 gives each case the verdict and kind it has alone, in two
// target calls (unoptimized, optimized) plus one alone check per failing case.
TEST(CheckBatch, SameVerdictsAsAloneWithAPlantedFault) {
  std::vector<Case> cases = Generate(100, 24);
  CheckOptions opts;
  opts.opt.inject = {"through-activation"};
  BatchFaultTarget alone_target(BatchFaultTarget::Fault::kNone);
  std::vector<CaseOutcome> alone;
  int failing = 0;
  for (const Case& c : cases) {
    alone.push_back(CheckCase(alone_target, c.gen.graph, c.gen.inputs, c.ref, opts));
    failing += alone.back().verdict != Verdict::kPass;
  }
  ASSERT_GT(failing, 0);
  BatchFaultTarget target(BatchFaultTarget::Fault::kNone);
  BatchOutcome b = CheckBatch(target, Batch(cases), opts);
  ASSERT_EQ(b.cases.size(), cases.size());
  for (size_t j = 0; j < cases.size(); ++j) {
    EXPECT_EQ(b.cases[j].outcome.verdict, alone[j].verdict) << j;
    EXPECT_EQ(b.cases[j].outcome.kind, alone[j].kind) << j;
    EXPECT_EQ(b.cases[j].alone, alone[j].verdict != Verdict::kPass) << j;
    EXPECT_FALSE(b.cases[j].batch_only);
  }
  EXPECT_EQ(target.max_cases, 24);
  EXPECT_LE(target.calls, 2 + 2 * failing);
}

// A target wrong only when two cases share its call: the case it hurts runs alone, passes
// there, and is batch-only; nothing is a finding.
TEST(CheckBatch, AFailureOnlyInTheBatchIsBatchOnlyNotAFinding) {
  std::vector<Case> cases = Generate(200, 4);
  BatchFaultTarget target(BatchFaultTarget::Fault::kWrong);
  BatchOutcome b = CheckBatch(target, Batch(cases), CheckOptions{});
  ASSERT_EQ(b.cases.size(), 4u);
  EXPECT_TRUE(b.cases[0].alone);
  EXPECT_TRUE(b.cases[0].batch_only);
  for (const BatchedCase& c : b.cases) {
    EXPECT_FALSE(c.outcome.finding());
    EXPECT_EQ(c.outcome.verdict, Verdict::kPass);
  }
  for (size_t j = 1; j < b.cases.size(); ++j) EXPECT_FALSE(b.cases[j].batch_only) << j;
}

// The joined call fails as a whole, and so does every smaller batch: every case runs alone;
// none failing there, all are batch-only.
TEST(CheckBatch, AFailedBatchRunsEveryCaseAlone) {
  std::vector<Case> cases = Generate(300, 3);
  BatchFaultTarget target(BatchFaultTarget::Fault::kError);
  BatchOutcome b = CheckBatch(target, Batch(cases), CheckOptions{});
  EXPECT_NE(b.batch_failure.find("joined graphs refused"), std::string::npos) << b.batch_failure;
  for (const BatchedCase& c : b.cases) {
    EXPECT_TRUE(c.alone);
    EXPECT_TRUE(c.batch_only);
    EXPECT_EQ(c.outcome.verdict, Verdict::kPass);
  }
}

// One case the target refuses (alone too) fails its batch: the halves are batches again, and
// only that case and its last partner end alone, the case UNSUPPORTED as it is alone; the
// others pass in smaller batches.
TEST(CheckBatch, ARefusedCaseIsFoundByHalving) {
  std::vector<Case> cases = Generate(500, 8);
  Graph& g = cases[6].gen.graph;
  const std::string from = g.inputs.front().name;
  g.inputs.front().name = "refuse_me";
  for (Node& n : g.nodes) {
    for (std::string& in : n.inputs) in = in == from ? "refuse_me" : in;
  }
  auto node = cases[6].gen.inputs.extract(from);
  node.key() = "refuse_me";
  cases[6].gen.inputs.insert(std::move(node));
  cases[6].ref = RunReference(g, cases[6].gen.inputs);
  BatchFaultTarget target(BatchFaultTarget::Fault::kRefuseMarked);
  BatchOutcome b = CheckBatch(target, Batch(cases), CheckOptions{});
  EXPECT_NE(b.batch_failure.find("refuse_me"), std::string::npos) << b.batch_failure;
  ASSERT_EQ(b.cases.size(), 8u);
  for (size_t j = 0; j < 8; ++j) {
    EXPECT_EQ(b.cases[j].alone, j >= 6) << j;  // 6 and its half's other case, 7
    EXPECT_FALSE(b.cases[j].batch_only) << j;
    EXPECT_EQ(b.cases[j].outcome.verdict, j == 6 ? Verdict::kUnsupported : Verdict::kPass) << j;
  }
  // 8 (refused: 1 call) -> 4 (2 calls) + 4 (refused) -> 2 (2 calls) + 2 (refused) -> 6 alone
  // (refused) + 7 alone (2 calls): 10 calls where alone checks would take 16.
  EXPECT_EQ(target.calls, 10);
}

// A rewrite over two cases' nodes is an interaction: both cases run alone; a rewrite naming no
// node belongs to the batch, not to a case.
TEST(CheckBatch, RewritesOverTwoCasesOrNoneAreTheBatchs) {
  std::vector<Case> cases = Generate(400, 3);
  BatchFaultTarget span(BatchFaultTarget::Fault::kSpan);
  BatchOutcome b = CheckBatch(span, Batch(cases), CheckOptions{});
  EXPECT_EQ(b.spanning_rewrites, 1);
  EXPECT_TRUE(b.cases.front().alone);
  EXPECT_TRUE(b.cases.back().alone);
  EXPECT_FALSE(b.cases[1].alone);
  for (const BatchedCase& c : b.cases) EXPECT_FALSE(c.batch_only);

  BatchFaultTarget anonymous(BatchFaultTarget::Fault::kAnonymous);
  b = CheckBatch(anonymous, Batch(cases), CheckOptions{});
  ASSERT_EQ(b.unattributed.size(), 1u);
  EXPECT_EQ(b.unattributed[0].rule, "anonymous");
  for (const BatchedCase& c : b.cases) {
    EXPECT_FALSE(c.alone);
    for (const Rewrite& rw : c.outcome.run.rewrites) EXPECT_NE(rw.rule, "anonymous");
  }
}

}  // namespace
}  // namespace fusefuzz
