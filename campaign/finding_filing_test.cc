// FileFinding's containment merge (docs/campaign.md, "What an unblamed signature keeps"): a
// minimized case that still holds a filed finding's minimized graph of the same rule, upstream
// of its worst output, is that finding's duplicate.
#include "campaign/finding_filing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

Node Unary(Op op, const std::string& in, const std::string& out) {
  Node n;
  n.name = "n_" + out;
  n.op = op;
  n.inputs = {in};
  n.output = out;
  return n;
}

// x -> Relu -> Sigmoid [-> more ops], worst output `worst`, as the minimizer left it, blamed on
// `rule` with no nodes named (a target that reports rules only, as ONNX Runtime does).
Repro Case(const std::vector<Op>& tail, const std::string& rule, const std::string& worst = "") {
  Repro r;
  r.target = "embedded";
  r.kind = FindingKind::kFusion;
  r.blame.rule = rule;
  r.blame.rewrite_index = 1;
  r.graph.inputs.push_back({"x", {1, 1, 1, 4}});
  r.graph.nodes = {Unary(Op::Relu, "x", "a"), Unary(Op::Sigmoid, "a", "b")};
  std::string v = "b";
  for (size_t i = 0; i < tail.size(); ++i) {
    const std::string out = "t" + std::to_string(i);
    r.graph.nodes.push_back(Unary(tail[i], v, out));
    v = out;
  }
  r.graph.outputs = {v};
  r.inputs["x"] = Tensor({1, 1, 1, 4}, {-1.0f, 0.5f, 2.0f, 3.0f});
  r.worst.output = worst.empty() ? v : worst;
  r.minimization = {{"nodes_after", r.graph.nodes.size()}};
  return r;
}

TEST(FileFinding, AMinimizedCaseHoldingAFiledGraphOfItsRuleIsItsDuplicate) {
  const fs::path dir = fs::temp_directory_path() / ("ff-filing-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const OutLayout l(dir.string());
  for (const std::string& d : {l.findings, l.claims, l.buckets, l.tmp}) fs::create_directories(d);
  FilingOptions o;
  o.minimize = false;  // the cases come as minimized
  o.sensitivity_check = false;
  std::unique_ptr<Target> target = MakeEmbeddedTarget();

  const Filed first = FileFinding(l, o, *target, Case({}, "R"), {"R"}, 1);
  EXPECT_FALSE(first.duplicate);
  ASSERT_TRUE(fs::exists(fs::path(l.findings) / first.signature / "repro.json"));

  // The filed chain with a Tanh the minimizer had to keep: the same finding.
  const Filed more = FileFinding(l, o, *target, Case({Op::Tanh}, "R"), {"R"}, 2);
  EXPECT_TRUE(more.duplicate);
  EXPECT_EQ(more.signature, first.signature);
  // Another rule's case is not (a pattern stands for its own rule only) ...
  const Filed other = FileFinding(l, o, *target, Case({Op::Tanh}, "S"), {"S"}, 3);
  EXPECT_FALSE(other.duplicate);
  EXPECT_NE(other.signature, first.signature);
  // ... and neither is one whose chain is not what the worst output reads.
  Repro beside = Case({}, "R");
  beside.graph.nodes.push_back(Unary(Op::Tanh, "x", "side"));
  beside.graph.outputs.push_back("side");
  beside.worst.output = "side";
  beside.minimization = {{"nodes_after", beside.graph.nodes.size()}};
  const Filed apart = FileFinding(l, o, *target, beside, {"R"}, 4);
  EXPECT_FALSE(apart.duplicate);
  EXPECT_NE(apart.signature, first.signature);
  // Nor a case the minimizer did not shrink (its graph is not a minimized one).
  Repro raw = Case({Op::Elu}, "R");
  raw.minimization = nullptr;
  EXPECT_NE(FileFinding(l, o, *target, raw, {"R"}, 5).signature, first.signature);
  fs::remove_all(dir);
}

// A target whose optimized runs go wrong (+1 on every output) once it has answered `clean`
// requests: a bug that depends on what the process ran before (PyTorch 13).
class StatefulTarget final : public Target {
 public:
  explicit StatefulTarget(int clean) : inner_(MakeEmbeddedTarget()), clean_(clean) {
    caps_ = inner_->caps();
    caps_.name = "stateful";
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "stateful"; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    RunRequest plain = req;
    plain.optimize = false;
    plain.opt = OptimizeOptions{};
    TargetResult r = inner_->Run(g, inputs, plain);
    if (req.optimize && runs_++ >= clean_) {
      for (auto& [name, t] : r.outputs) {
        for (float& v : t.data) v += 1.0f;
      }
    }
    return r;
  }

 private:
  std::unique_ptr<Target> inner_;
  TargetCaps caps_;
  int clean_;
  int runs_ = 0;
};

std::string ReportOf(const OutLayout& l, const Filed& f) {
  std::ifstream in(fs::path(l.findings) / f.signature / "report.md");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(FileFinding, AFindingAFreshTargetDoesNotReproduceSaysItDependsOnEarlierCases) {
  const fs::path dir = fs::temp_directory_path() / ("ff-fresh-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const OutLayout l(dir.string());
  for (const std::string& d : {l.findings, l.claims, l.buckets, l.tmp}) fs::create_directories(d);
  FilingOptions o;
  o.minimize = false;
  o.sensitivity_check = false;
  StatefulTarget campaign(0);  // wrong from the first optimized run on
  Repro r = Case({}, "");
  r.blame = Blame{};

  // A fresh copy that is wrong at once too: the finding replays, nothing is said.
  o.fresh_target = [] { return std::make_unique<StatefulTarget>(0); };
  const Filed plain = FileFinding(l, o, campaign, r, {}, 1);
  ASSERT_FALSE(plain.duplicate);
  EXPECT_EQ(ReportOf(l, plain).find("Depends on earlier cases"), std::string::npos);

  // A fresh copy that is right on its first runs: the report says the finding needs history.
  Repro other = Case({}, "");  // another chain: not the first one's duplicate
  other.graph.nodes = {Unary(Op::Tanh, "x", "a"), Unary(Op::Elu, "a", "b")};
  other.blame = Blame{};
  o.fresh_target = [] { return std::make_unique<StatefulTarget>(1000); };
  const Filed needs = FileFinding(l, o, campaign, other, {}, 2);
  ASSERT_FALSE(needs.duplicate);
  const std::string md = ReportOf(l, needs);
  EXPECT_NE(md.find("**Depends on earlier cases:** not reproduced by a freshly started target "
                    "(PASS)"),
            std::string::npos)
      << md.substr(0, 800);
  fs::remove_all(dir);
}

// A finding whose signature the engine release's baseline lists (corpus/known) is counted as
// known but still gets its folder, marked with the bug's link in report.md and repro.json;
// one in --known gets none (issue 45, item 8).
TEST(FileFinding, AKnownUpstreamBugIsFiledKnownAndMarked) {
  const fs::path dir = fs::temp_directory_path() / ("ff-upstream-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const OutLayout l(dir.string());
  for (const std::string& d : {l.findings, l.claims, l.buckets, l.tmp}) fs::create_directories(d);
  FilingOptions o;
  o.minimize = false;
  o.sensitivity_check = false;
  std::unique_ptr<Target> target = MakeEmbeddedTarget();
  const std::string sig = Signature(Case({}, "R"));
  o.upstream.Add(sig, {"R drops a Relu", "https://example.org/issue/1",
                       "docs/upstream-bugs.md#r-drops-a-relu"});
  const Filed f = FileFinding(l, o, *target, Case({}, "R"), {"R"}, 1);
  EXPECT_TRUE(f.known);
  EXPECT_EQ(f.signature, sig);
  const std::string md = ReportOf(l, f);
  EXPECT_NE(md.find("\n\n**Known upstream: https://example.org/issue/1** (R drops a Relu; "
                    "docs/upstream-bugs.md#r-drops-a-relu)"),
            std::string::npos)
      << md.substr(0, 400);
  const Repro back = ReadReproFile((fs::path(l.findings) / sig / "repro.json").string());
  EXPECT_EQ(back.known_upstream.value("link", ""), "https://example.org/issue/1");
  // Listed by --known as well: known, and no folder (the user's baseline says "filed before").
  const std::string other = Signature(Case({Op::Tanh}, "S"));
  o.upstream.Add(other, {"S", "l", "d"});
  o.known = KnownSignatures(std::vector<std::string>{other});
  const Filed g = FileFinding(l, o, *target, Case({Op::Tanh}, "S"), {"S"}, 2);
  EXPECT_TRUE(g.known);
  EXPECT_FALSE(fs::exists(fs::path(l.findings) / other));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
