// Spellings drawn by the generator (issue 51): only the config's, only where they apply, on the
// very graph the same seed gives without them; none at all without spellings.
#include "generators/gen_spellings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "generators/generator.h"
#include "ir/spelling.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

GenConfig WithSpellings(SpellingFamily family) {
  GenConfig cfg;
  for (const SpellingInfo& i : AllSpellings()) {
    if (i.family == family) cfg.spellings.insert(std::string(i.name));
  }
  return cfg;
}

TEST(GenSpellings, SameGraphAsWithoutThemAndEverySpellingApplies) {
  for (SpellingFamily family : {SpellingFamily::kTorch, SpellingFamily::kOnnx}) {
    const GenConfig cfg = WithSpellings(family);
    std::set<std::string> used;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      GeneratedCase spelled = GenerateFromSeed(seed, cfg);
      GeneratedCase plain = GenerateFromSeed(seed, GenConfig{});
      VerifyGraph(spelled.graph);  // throws when a spelling does not apply
      for (Node& n : spelled.graph.nodes) {
        if (n.spelling.empty()) continue;
        used.insert(n.spelling);
        EXPECT_TRUE(cfg.spellings.count(n.spelling));
        n.spelling.clear();
      }
      EXPECT_EQ(spelled.graph, plain.graph) << seed;
      EXPECT_EQ(spelled.inputs, plain.inputs) << seed;
    }
    std::string names;
    for (const std::string& u : used) names += " " + u;
    EXPECT_GE(used.size(), 10u) << SpellingFamilyName(family) << ":" << names;
  }
}

TEST(GenSpellings, NoSpellingsDrawsNothingMore) {
  SeededSource a(7), b(7);
  GenConfig off = WithSpellings(SpellingFamily::kTorch);
  off.spelling_rate = 0;
  Generate(a, GenConfig{});
  Generate(b, off);
  EXPECT_EQ(a.trace(), b.trace());
  EXPECT_EQ(ConfigToJson(GenConfig{}).count("spellings"), 0u);
}

TEST(GenSpellings, ConfigReadsAndWritesThem) {
  const GenConfig cfg = ConfigFromJson(
      nlohmann::json::parse(R"({"spellings":["torch.F.relu"],"spelling_rate":0.5})"));
  EXPECT_EQ(cfg.spellings, std::set<std::string>{"torch.F.relu"});
  EXPECT_EQ(ConfigFromJson(ConfigToJson(cfg)), cfg);
  EXPECT_THROW(ConfigFromJson(nlohmann::json::parse(R"({"spellings":["torch.nope"]})")),
               std::exception);
}

}  // namespace
}  // namespace fusefuzz
