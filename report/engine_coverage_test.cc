#include "report/engine_coverage.h"

#include <gtest/gtest.h>

namespace fusefuzz {
namespace {

CampaignStats Stats() {
  CampaignStats s;
  s.engine = "onnxruntime-node 1.30.0";
  s.engine_fusions = {"ConvBNFusion", "Pad_Fusion", "ConvActivationFusion", "MemcpyTransformer"};
  s.engine_unreachable = {{"MemcpyTransformer", "only the CPU EP"}};
  s.rule_fires = {{"ConvBNFusion", 7}, {"Level1_RuleBasedTransformer", 9}, {"Pad_Fusion", 0}};
  return s;
}

TEST(EngineCoverage, SplitsFiredNeverFiredUnreachableAndUndeclared) {
  const EngineFusionCoverage c = ComputeEngineFusions(Stats());
  EXPECT_EQ(c.declared.size(), 4u);
  EXPECT_EQ(c.fired, (std::map<std::string, int64_t>{{"ConvBNFusion", 7}}));
  EXPECT_EQ(c.never_fired, (std::vector<std::string>{"ConvActivationFusion", "Pad_Fusion"}));
  EXPECT_EQ(c.unreachable.count("MemcpyTransformer"), 1u);
  EXPECT_EQ(c.undeclared, (std::map<std::string, int64_t>{{"Level1_RuleBasedTransformer", 9}}));
}

TEST(EngineCoverage, JsonRoundTripsTheDeclaration) {
  const nlohmann::json j = EngineFusionsJson(Stats());
  EXPECT_EQ(j["fired"]["ConvBNFusion"], 7);
  EXPECT_EQ(j["never_fired"], nlohmann::json({"ConvActivationFusion", "Pad_Fusion"}));
  EXPECT_EQ(j["unreachable"]["MemcpyTransformer"], "only the CPU EP");
  EXPECT_EQ(j["undeclared_fired"]["Level1_RuleBasedTransformer"], 9);
  CampaignStats back;
  EngineFusionsFromJson(j, &back);
  EXPECT_EQ(back.engine, "onnxruntime-node 1.30.0");
  EXPECT_EQ(back.engine_fusions.size(), 4u);
  EXPECT_EQ(back.engine_unreachable.size(), 1u);
  EXPECT_TRUE(EngineFusionsJson(CampaignStats{}).is_null());
  // Nothing fired: still objects, not arrays.
  CampaignStats none = Stats();
  none.rule_fires.clear();
  none.engine_unreachable.clear();
  const nlohmann::json k = EngineFusionsJson(none);
  EXPECT_TRUE(k["fired"].is_object() && k["unreachable"].is_object());
}

TEST(EngineCoverage, MarkdownHtmlAndConsoleSayFiredOverDeclared) {
  const CampaignStats s = Stats();
  const std::string md = EngineFusionsMarkdown(s);
  EXPECT_NE(md.find("## Engine fusions"), std::string::npos);
  EXPECT_NE(md.find("**1 / 4 fired**"), std::string::npos) << md;
  EXPECT_NE(md.find("Never fired (2): `ConvActivationFusion` `Pad_Fusion`"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| `MemcpyTransformer` | only the CPU EP |"), std::string::npos) << md;
  const std::string html = EngineFusionsHtml(s);
  EXPECT_NE(html.find("id=\"engine-fusions\""), std::string::npos);
  EXPECT_NE(html.find("<strong>1 / 4 fired</strong>"), std::string::npos);
  const std::string con = EngineFusionsConsole(s);
  EXPECT_EQ(con,
            "engine fusions: 1 / 4 fired (1 unreachable here)\n  fired: ConvBNFusion=7\n"
            "  never fired: ConvActivationFusion Pad_Fusion\n");
  EXPECT_EQ(EngineFusionsMarkdown(CampaignStats{}), "");
  EXPECT_EQ(EngineFusionsConsole(CampaignStats{}), "");
}

TEST(EngineCoverage, ConsoleShowsOnlyPrintableNames) {
  CampaignStats s;
  s.engine_fusions = {"a\x1b[2Jb"};
  EXPECT_EQ(EngineFusionsConsole(s), "engine fusions: 0 / 1 fired\n  never fired: a?[2Jb\n");
}

TEST(EngineCoverage, SummaryFilesCarryTheSection) {
  const CampaignStats s = Stats();
  EXPECT_NE(SummaryMarkdown(s).find("## Engine fusions"), std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
