// The fault catalogue as a whole: every fault registered, documented and filed as the
// conventions say, and never active unless injected.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "optimizer/faults/fault_testing.h"
#include "optimizer/registry.h"

namespace fusefuzz::testing {
namespace {

const std::vector<std::string> kRequired = {
    "through-activation",    "declaration-order",    "bn-bn-half-fold", "multi-consumer",
    "bn-before-padded-conv", "bias-not-scaled",      "eps-dropped",     "groups-layout",
    "relu6-unbounded",       "activation-before-add"};

std::string ReadSource(const std::string& rel) {
  std::ifstream f(std::string(FUSEFUZZ_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(FaultCatalogue, HasEveryRequiredFault) {
  for (const auto& name : kRequired) {
    const FaultInfo* f = FindFault(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_NE(FindRule(f->before), nullptr) << name << " corrupts unknown rule " << f->before;
    EXPECT_EQ(FindRule(name), nullptr) << name << " is also a rule";
  }
  EXPECT_GE(ListFaults().size(), kRequired.size());
}

TEST(FaultCatalogue, SummariesNameTheCorruptedRule) {
  for (const RuleInfo& f : ListFaults()) {
    EXPECT_FALSE(f.summary.empty()) << f.name;
    EXPECT_NE(f.summary.find("[corrupts "), std::string::npos) << f.name;
  }
}

TEST(FaultCatalogue, EachFaultHasItsFileWithABugParagraphAndADocEntry) {
  const std::string doc = ReadSource("docs/faults.md");
  ASSERT_FALSE(doc.empty()) << "docs/faults.md missing";
  for (const RuleInfo& f : ListFaults()) {
    std::string file = f.name;
    std::replace(file.begin(), file.end(), '-', '_');
    // Quantized faults live in optimizer/faults/quant/.
    std::string src = ReadSource("optimizer/faults/" + file + ".cc");
    if (src.empty()) src = ReadSource("optimizer/faults/quant/" + file + ".cc");
    ASSERT_FALSE(src.empty()) << "optimizer/faults/[quant/]" << file << ".cc";
    EXPECT_EQ(src.rfind("// " + f.name + ":", 0), 0u) << file << ".cc must open with its name";
    EXPECT_NE(src.find("// Reproduces"), std::string::npos) << file << ".cc names no real bug";
    EXPECT_NE(doc.find("## `" + f.name + "`"), std::string::npos) << f.name << " not documented";
  }
}

TEST(FaultCatalogue, FaultsAreOffByDefault) {
  // A graph on which every fault of the catalogue could fire somewhere.
  Rng rng(5);
  Graph g = MakeGraph(
      {In("x", {1, 4, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 4, 4, 3, 1, true, 1), MakeBn(rng, "bn", "c", "b", 4),
       MakeNode(Op::Add, "add", {"b", "x"}, "s"), MakeNode(Op::Relu, "relu", {"s"}, "y")},
      {"y"});
  OptimizeResult r = Optimize(g);
  for (const auto& rw : r.rewrites) EXPECT_EQ(FindFault(rw.rule), nullptr) << rw.rule;
}

TEST(FaultCatalogue, UnknownFaultIsAnInputError) {
  Rng rng(6);
  Graph g = MakeGraph({In("x", {1, 1, 3, 3})}, {MakeConv(rng, "conv", "x", "y", 1, 1, 1)}, {"y"});
  OptimizeOptions o;
  o.inject = {"no-such-fault"};
  EXPECT_THROW(Optimize(g, o), InputError);
}

TEST(FaultCatalogue, InjectedFaultCanBeDisabledAgain) {
  Rng rng(7);
  Graph g = MakeGraph(
      {In("x", {1, 3, 6, 6})},
      {MakeConv(rng, "conv", "x", "c", 3, 4, 3, 1, true, 1), MakeBn(rng, "bn", "c", "y", 4)},
      {"y"});
  OptimizeOptions o;
  o.inject = {"bias-not-scaled"};
  o.disable = {"bias-not-scaled"};
  OptimizeResult r = Optimize(g, o);
  EXPECT_FALSE(Fired(r, "bias-not-scaled"));
  EXPECT_TRUE(Fired(r, "conv-bn-fold"));
}

}  // namespace
}  // namespace fusefuzz::testing
