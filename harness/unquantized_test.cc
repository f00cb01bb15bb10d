// The `unquantized` finding kind: nodes the backend promises to quantize that ran in float or
// reference form, how one failure is told from another, and the name round trip.
#include <gtest/gtest.h>

#include "harness/check.h"

namespace fusefuzz {
namespace {

TargetResult Forms(std::map<std::string, NodeForm> forms, std::vector<std::string> promised) {
  TargetResult r;
  r.node_forms = std::move(forms);
  r.backend_quantizes = std::move(promised);
  return r;
}

TEST(Unquantized, OnlyPromisedNodesInFloatOrReferenceFormCount) {
  // Conv -> BN -> BN on prepare_fx: the fused conv in reference form, the second BN in float;
  // "r" ran in float but the backend promises nothing for it; "s" was simulated.
  const TargetResult r = Forms({{"c", NodeForm::kReference},
                                {"bn1", NodeForm::kReference},
                                {"bn2", NodeForm::kFloat},
                                {"relu", NodeForm::kQuantized},
                                {"r", NodeForm::kFloat},
                                {"s", NodeForm::kSimulated}},
                               {"c", "bn1", "bn2", "relu", "s", "absent"});
  EXPECT_EQ(LeftUnquantized(r), (std::vector<std::string>{"c", "bn1", "bn2"}));
  EXPECT_TRUE(LeftUnquantized(Forms({{"c", NodeForm::kQuantized}}, {"c"})).empty());
  EXPECT_TRUE(LeftUnquantized(Forms({{"c", NodeForm::kFloat}}, {})).empty());
}

TEST(Unquantized, SameFailureKeepsTheFirstNodeLeftUnquantized) {
  CaseOutcome failing;
  failing.kind = FindingKind::kUnquantized;
  failing.run = Forms({{"c", NodeForm::kReference}, {"bn2", NodeForm::kFloat}}, {"c", "bn2"});
  CaseOutcome shrunk = failing;
  shrunk.run = Forms({{"c", NodeForm::kReference}}, {"c"});  // bn2 removed by a reduction
  EXPECT_TRUE(SameFailure(shrunk, failing));
  CaseOutcome other = failing;
  other.run = Forms({{"c", NodeForm::kQuantized}, {"bn2", NodeForm::kFloat}}, {"c", "bn2"});
  EXPECT_FALSE(SameFailure(other, failing));
  CaseOutcome fusion = failing;
  fusion.kind = FindingKind::kFusion;
  EXPECT_FALSE(SameFailure(fusion, failing));
}

TEST(Unquantized, KindAndFormNamesRoundTrip) {
  EXPECT_EQ(FindingKindName(FindingKind::kUnquantized), "unquantized");
  EXPECT_EQ(ParseFindingKind("unquantized"), FindingKind::kUnquantized);
  for (NodeForm f :
       {NodeForm::kQuantized, NodeForm::kReference, NodeForm::kFloat, NodeForm::kSimulated}) {
    EXPECT_EQ(ParseNodeForm(NodeFormName(f)), f);
  }
  EXPECT_FALSE(ParseNodeForm("int8").has_value());
}

}  // namespace
}  // namespace fusefuzz
