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

}  // namespace
}  // namespace fusefuzz
