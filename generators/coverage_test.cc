#include "generators/coverage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "generators/generator.h"
#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

// x[1,2,4,4] -> Conv 1x1, left pad 1 (2 output channels) -> Sub(c, conv), c of shape [4,1]
// (varies over H) -> y. When `conv_is_output`, the conv output is also a graph output.
Graph PaddedConvThenConstMinus(bool conv_is_output) {
  return ParseGraph(std::string(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,2,4,4]}],
    "nodes":[
     {"name":"conv","op":"Conv","inputs":["x"],"outputs":["c"],"attrs":{"pads":[0,1,0,0]},
      "params":{"W":{"shape":[2,2,1,1],"data":[0.5,-1,0.25,2]}}},
     {"name":"sub","op":"Sub","inputs":["c"],"outputs":["y"],
      "params":{"A":{"shape":[4,1],"data":[1,-2,0,3]}}}],
    "outputs":["y")") +
                    (conv_is_output ? R"(, "c"]})" : "]}"));
}

TEST(Coverage, ClassIdsAreUniqueAndGrouped) {
  std::set<std::string> ids;
  for (const auto& c : AllCoverageClasses()) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id;
    EXPECT_EQ(c.id.substr(0, c.group.size() + 1), c.group + "/") << c.id;
    EXPECT_FALSE(c.doc.empty()) << c.id;
  }
  // A class the generator must not build on purpose: a zero constant divisor.
  EXPECT_EQ(ids.count("const/Div/right/sign=zero"), 0u);
  EXPECT_EQ(ids.count("const/Div/left/sign=zero"), 1u);
  // "Act*" expands to one pair per activation.
  EXPECT_EQ(ids.count("pair/Conv>Gelu/fanout"), 1u);
  EXPECT_EQ(ids.count("pair/Act*>MaxPool/single"), 0u);
}

TEST(Coverage, ClassifiesAHandWrittenGraph) {
  const auto counts = ClassifyGraph(PaddedConvThenConstMinus(false));
  for (const char* id :
       {"attr/Conv/kernel=1x1", "attr/Conv/kernel=1x1_padded", "attr/Conv/pads=asymmetric",
        "attr/Conv/pads=ge_kernel", "attr/Conv/stride=1", "attr/Conv/group=1", "attr/Conv/bias=no",
        "attr/Conv/out_channels=gt1", "front/Conv:kernel=1x1_padded>Sub.c",
        "front/Conv:bias=no>Sub.c", "const/left/mask=H", "const/Sub/left/group=spatial",
        "const/Sub/left/sign=zero", "const/Sub/rank=2", "conv_const/Sub/spatial",
        "pair/Conv>Sub.c/single", "motif/conv_const", "motif/const_minus_conv"}) {
    EXPECT_EQ(counts.count(id), 1u) << id;
  }
  for (const char* id : {"attr/Conv/kernel=square", "attr/Conv/pads=none", "pair/Conv>Sub.c/fanout",
                         "const/right/mask=H", "motif/conv_bn"}) {
    EXPECT_EQ(counts.count(id), 0u) << id;
  }
  // Every key is a defined class.
  std::set<std::string> ids;
  for (const auto& c : AllCoverageClasses()) ids.insert(c.id);
  for (const auto& [id, n] : counts) {
    EXPECT_EQ(ids.count(id), 1u) << id;
    EXPECT_GT(n, 0);
  }
  // With the conv output also a graph output the pair is the fan-out variant.
  const auto fan = ClassifyGraph(PaddedConvThenConstMinus(true));
  EXPECT_EQ(fan.count("pair/Conv>Sub.c/fanout"), 1u);
  EXPECT_EQ(fan.count("pair/Conv>Sub.c/single"), 0u);
}

TEST(Coverage, InvalidGraphIsAnInputError) {
  Graph g = PaddedConvThenConstMinus(false);
  g.nodes[1].inputs = {"nope"};
  EXPECT_THROW(ClassifyGraph(g), InputError);
}

// The generator reaches every class of coverage.def with the default config. Adding a class to
// coverage.def without teaching the generator to build it fails here; so does a generator change
// that loses one. Seeds are fixed: the test is deterministic.
TEST(Coverage, DefaultGeneratorReachesEveryClass) {
  const GenConfig cfg;
  CoverageTally t;
  constexpr uint64_t kGraphs = 10000;
  for (uint64_t seed = 0; seed < kGraphs; ++seed) t.AddGraph(GenerateFromSeed(seed, cfg).graph);
  std::string missing;
  for (const auto& c : AllCoverageClasses()) {
    // Quantized classes: the quantized generator's (QuantGenerator.ReachesEveryQuantClass).
    if (c.group == "quant") {
      EXPECT_EQ(t.graphs_with[c.id], 0) << c.id;
      continue;
    }
    if (t.graphs_with[c.id] == 0) missing += "  " + c.id + " (" + c.doc + ")\n";
  }
  EXPECT_EQ(missing, "") << "classes never generated in " << kGraphs << " graphs:\n" << missing;
  // Common fusion patterns are not starved by the bias toward rare classes.
  EXPECT_GT(t.Share("motif/conv_bn"), 0.4);
  EXPECT_GT(t.Share("motif/bn_conv"), 0.2);
  EXPECT_GT(t.Share("motif/residual"), 0.1);
  EXPECT_GT(t.Share("motif/conv_const"), 0.1);
}

TEST(Coverage, MarkdownTableFlagsRareClasses) {
  CoverageTally t;
  t.Add({{"attr/Conv/stride=1", 3}});
  t.Add({{"attr/Conv/stride=1", 1}, {"motif/conv_bn", 1}});
  CoverageTableOptions o;
  o.min_share = 0.75;
  const std::string md = RenderCoverageMarkdown(t, o);
  EXPECT_NE(md.find("| `attr/Conv/stride=1` | 4 | 2 | 100.00% |  |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| `motif/conv_bn` | 1 | 1 | 50.00% | **low** |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| `motif/repeat` | 0 | 0 | 0.00% | **low** |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("over 2 graphs"), std::string::npos);
  o.only_flagged = true;
  const std::string flagged = RenderCoverageMarkdown(t, o);
  EXPECT_EQ(flagged.find("attr/Conv/stride=1`"), std::string::npos);
  EXPECT_NE(flagged.find("motif/conv_bn"), std::string::npos);
  const nlohmann::json j = CoverageToJson(t, o);
  EXPECT_EQ(j["graphs"], 2);
  // Without a quantized graph the "quant/" rows are left out.
  size_t quant = 0;
  for (const auto& c : AllCoverageClasses()) quant += c.group == "quant";
  EXPECT_GT(quant, 0u);
  EXPECT_EQ(j["flagged"].size(), AllCoverageClasses().size() - 1 - quant);
  t.Add({{"quant/qlinear_add", 1}});
  const std::string q = RenderCoverageMarkdown(t, o);
  EXPECT_NE(q.find("quant/qlinear_conv"), std::string::npos);
  // A quantized campaign lists the quantized classes and the float classes it reached, not the
  // float generator's never-reached ones (issue 45, item 21).
  EXPECT_NE(q.find("motif/conv_bn"), std::string::npos);
  EXPECT_EQ(q.find("motif/repeat"), std::string::npos) << q;
  EXPECT_NE(q.find("the quantized generator's"), std::string::npos);
  // Every quantized class and the two float classes reached, each below 0.75 of 3 graphs.
  EXPECT_EQ(CoverageToJson(t, o)["flagged"].size(), quant + 2);
}

}  // namespace
}  // namespace fusefuzz
