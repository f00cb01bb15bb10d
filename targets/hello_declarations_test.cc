#include "targets/hello_declarations.h"

#include <gtest/gtest.h>

#include "targets/rule_names.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

TEST(HelloDeclarations, ReadsFusionsUnreachableAndConstraints) {
  TargetCaps caps;
  const json hello = {{"fusions", {"ConvBNFusion", "Pad_Fusion"}},
                      {"unreachable_fusions", {{"MemcpyTransformer", "one EP"}}},
                      {"constraints",
                       {{"activation_types", {"uint8"}},
                        {"per_axis_activations", false},
                        {"negative_scales", false},
                        {"a_later_key", 3}}}};
  ASSERT_EQ(ParseHelloDeclarations(hello, &caps), "");
  EXPECT_EQ(caps.fusions, (std::vector<std::string>{"ConvBNFusion", "Pad_Fusion"}));
  EXPECT_EQ(caps.unreachable_fusions.at("MemcpyTransformer"), "one EP");
  EXPECT_EQ(caps.constraints.activation_types, std::vector<std::string>{"uint8"});
  EXPECT_FALSE(caps.constraints.per_axis_activations);
  EXPECT_FALSE(caps.constraints.negative_scales);
  EXPECT_TRUE(caps.constraints.shared_quantized_values);
  EXPECT_EQ(ConstraintsToJson(caps.constraints), json({{"activation_types", {"uint8"}},
                                                       {"per_axis_activations", false},
                                                       {"negative_scales", false}}));
  // A second hello (a restart) replaces, never merges.
  ASSERT_EQ(ParseHelloDeclarations(json::object(), &caps), "");
  EXPECT_TRUE(caps.fusions.empty());
  EXPECT_EQ(caps.constraints, TargetConstraints{});
}

TEST(HelloDeclarations, BadDeclarationsNameTheirPath) {
  TargetCaps caps;
  EXPECT_EQ(ParseHelloDeclarations({{"fusions", "ConvBNFusion"}}, &caps),
            "hello: /fusions must be an array of names");
  EXPECT_EQ(ParseHelloDeclarations({{"fusions", {"a", ""}}}, &caps),
            "hello: /fusions/1: must be a non-empty string of at most 200 bytes");
  EXPECT_EQ(ParseHelloDeclarations({{"constraints", {{"activation_types", {"int4"}}}}}, &caps),
            "hello: /constraints/activation_types/0: must be \"int8\" or \"uint8\", got \"int4\"");
  EXPECT_EQ(ParseHelloDeclarations({{"constraints", {{"negative_scales", "no"}}}}, &caps),
            "hello: /constraints/negative_scales must be true or false");
  EXPECT_EQ(ParseHelloDeclarations({{"constraints", json::array()}}, &caps),
            "hello: \"constraints\" must be an object");
  EXPECT_NE(ParseHelloDeclarations({{"unreachable_fusions", {{"x", 1}}}}, &caps), "");
}

TEST(HelloDeclarations, DeclaredFusionsFallBackToRulesThenFusefuzzRules) {
  TargetCaps caps;
  EXPECT_TRUE(DeclaredFusions(caps).empty());
  caps.disable = true;
  EXPECT_FALSE(DeclaredFusions(caps).empty());  // fusefuzz's own rules
  caps.rules = {"A", "B"};
  EXPECT_EQ(DeclaredFusions(caps), (std::vector<std::string>{"A", "B"}));
  caps.fusions = {"B"};
  EXPECT_EQ(DeclaredFusions(caps), std::vector<std::string>{"B"});
}

}  // namespace
}  // namespace fusefuzz

namespace fusefuzz {
namespace {

std::string Hello(const std::string& tail) {
  return R"({"protocol":"fusefuzz-target","version":1,"name":"t","ops":["Relu"])" + tail + "}";
}

// Capability batch (docs/target-protocol.md, "Batches"): the suggested cases and node limit.
TEST(HelloBatch, CapabilityCasesAndMaxNodes) {
  TargetCaps caps;
  ASSERT_EQ(ParseHello(Hello(R"(,"capabilities":["batch"])"), &caps), "");
  EXPECT_EQ(caps.batch_cases, kDefaultBatchCases);
  EXPECT_EQ(caps.batch_max_nodes, 0);
  ASSERT_EQ(
      ParseHello(Hello(R"(,"capabilities":["batch"],"batch":{"cases":16,"max_nodes":600})"), &caps),
      "");
  EXPECT_EQ(caps.batch_cases, 16);
  EXPECT_EQ(caps.batch_max_nodes, 600);
  // Without the capability the object promises nothing.
  ASSERT_EQ(ParseHello(Hello(R"(,"batch":{"cases":16})"), &caps), "");
  EXPECT_EQ(caps.batch_cases, 0);
  EXPECT_EQ(ParseHello(Hello(R"(,"capabilities":["batch"],"batch":{"cases":0})"), &caps),
            "hello: /batch/cases must be an integer from 1 to 256, got 0");
  EXPECT_EQ(ParseHello(Hello(R"(,"capabilities":["batch"],"batch":{"max_nodes":"many"})"), &caps),
            "hello: /batch/max_nodes must be an integer from 1 to 1048576, got \"many\"");
  EXPECT_EQ(ParseHello(Hello(R"(,"capabilities":["batch"],"batch":[16])"), &caps),
            "hello: \"batch\" must be an object");
}

}  // namespace
}  // namespace fusefuzz
