// Signatures name finding folders: whatever a target calls its rules, and whatever a graph
// file calls its nodes, a signature is one safe path component.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "harness/repro.h"

namespace fusefuzz {
namespace {

bool SafeComponent(const std::string& s) {
  return !s.empty() && s[0] != '.' && s.size() <= 89 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

// Issue 11 §2.1/§2.3: `<finding>/../../../ESCAPED` as a rule name made fusefuzz write outside
// --out; `/`, spaces and newlines in rule names lost findings.
TEST(Signature, HostileRuleAndNodeNamesGiveSafeDistinctFolderNames) {
  std::set<std::string> seen;
  for (const std::string& rule :
       {std::string("<finding>/../../../ESCAPED"), std::string("evil/../x"), std::string("a b"),
        std::string("a\nb"), std::string(".."), std::string("/"), std::string("\xff\xfe"),
        std::string(500, 'r'), std::string("conv-bn-fold")}) {
    Repro r;
    r.kind = FindingKind::kFusion;
    r.blame.rule = rule;
    r.blame.nodes = {"../node/x", "n\n2"};  // not in the graph: the names themselves are used
    std::string sig = Signature(r);
    EXPECT_TRUE(SafeComponent(sig)) << sig;
    EXPECT_TRUE(seen.insert(sig).second) << "collision: " << sig;
  }
  Repro plain;
  plain.kind = FindingKind::kFusion;
  plain.blame.rule = "conv-bn-fold";
  EXPECT_EQ(Signature(plain).rfind("fusion-conv-bn-fold-", 0), 0u) << Signature(plain);
}

// Issue 14: unblamed target errors were keyed by the whole graph, so one refused option became one
// "unique" finding per graph. The class of the message is the key: same failure, one folder;
// another failure, another folder.
TEST(Signature, UnblamedTargetErrorsAreKeyedByTheirMessageClass) {
  auto sig = [](FindingKind kind, const std::string& detail, const std::string& input) {
    Repro r;
    r.kind = kind;
    r.detail = detail;
    r.graph.inputs.push_back(ValueInfo{input, {1, 2, 3, 3}});
    return Signature(r);
  };
  const std::string a = sig(FindingKind::kTargetError,
                            "target error: node 'n7': unknown rule 'Pad_Fusion' (case 12)", "x");
  const std::string b = sig(FindingKind::kTargetError,
                            "target error: node \"c2\": unknown rule 'Pad_Fusion' (case 3)", "y");
  const std::string c = sig(FindingKind::kTargetError, "target error: out of memory", "x");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, sig(FindingKind::kCrash, "target error: node 'n7': unknown rule 'x' (case 1)", "x"));
  EXPECT_EQ(ErrorClass("shape [1,3,1,1], expected [1,3,2,2]\nmore"),
            "shape [#,#,#,#], expected [#,#,#,#]");
}

}  // namespace
}  // namespace fusefuzz
