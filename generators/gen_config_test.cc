#include "generators/gen_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace fusefuzz {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    ConfigFromJson(nlohmann::json::parse(text), "cfg.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(GenConfig, DefaultsCoverEveryOpAndPattern) {
  GenConfig c;
  EXPECT_EQ(c.op_weights.size(), AllOps().size());
  EXPECT_EQ(c.allowed_ops.size(), AllOps().size());
  EXPECT_EQ(c.pattern_weights.size(), AllPatterns().size());
  EXPECT_EQ(c.limits.max_nodes, 12);
  EXPECT_EQ(c.limits.max_channels, 16);
  EXPECT_FALSE(c.allow_nan_inf);
  EXPECT_NO_THROW(ValidateConfig(c));
}

TEST(GenConfig, JsonRoundTripIsExact) {
  GenConfig c;
  c.op_weights[Op::Gelu] = 0.125;
  c.pattern_weights[Pattern::kResidual] = 9;
  c.allowed_ops = {Op::Conv, Op::BatchNorm, Op::Relu};
  c.limits.max_nodes = 7;
  c.probabilities.tiny_var = 0.9;
  c.values.input_scales = {{0.1, 1}, {3.0, 2}};
  c.values.exact_zero = 0.3;
  c.allow_nan_inf = true;
  nlohmann::json j = ConfigToJson(c);
  EXPECT_EQ(ConfigFromJson(j), c);
  EXPECT_EQ(ConfigFromJson(nlohmann::json::parse(ConfigDump(c))), c);
  EXPECT_EQ(j["allowed_ops"], nlohmann::json({"Conv", "BatchNorm", "Relu"}));  // op order
  EXPECT_EQ(j["limits"]["max_nodes"], 7);
}

TEST(GenConfig, PartialJsonKeepsDefaults) {
  GenConfig c = ConfigFromJson(nlohmann::json::parse(R"({"limits": {"max_nodes": 4}})"));
  GenConfig d;
  d.limits.max_nodes = 4;
  EXPECT_EQ(c, d);
  GenConfig e = ConfigFromJson(nlohmann::json::parse(R"({"allowed_ops": ["Conv", "Relu"]})"));
  EXPECT_EQ(e.allowed_ops, (std::set<Op>{Op::Conv, Op::Relu}));
}

TEST(GenConfig, ErrorsNameTheJsonPath) {
  EXPECT_EQ(ErrorOf(R"({"bogus": 1})"), "cfg.json: /bogus: unknown key");
  EXPECT_EQ(ErrorOf(R"({"op_weights": {"Convv": 1}})"),
            "cfg.json: /op_weights/Convv: unknown op 'Convv'");
  EXPECT_EQ(ErrorOf(R"({"op_weights": {"Conv": "x"}})"),
            "cfg.json: /op_weights/Conv: expected a number, got string");
  EXPECT_EQ(ErrorOf(R"({"op_weights": {"Conv": -1}})"),
            "cfg.json: /op_weights/Conv: weight must be finite and >= 0");
  EXPECT_EQ(ErrorOf(R"({"pattern_weights": {"nope": 1}})"),
            "cfg.json: /pattern_weights/nope: unknown pattern 'nope'");
  EXPECT_EQ(ErrorOf(R"({"allowed_ops": ["Conv", 3]})"),
            "cfg.json: /allowed_ops/1: expected an op name (string)");
  EXPECT_EQ(ErrorOf(R"({"allowed_ops": []})"), "cfg.json: /allowed_ops: no op allowed");
  EXPECT_EQ(ErrorOf(R"({"limits": {"max_nodes": 1.5}})"),
            "cfg.json: /limits/max_nodes: expected an integer, got number");
  EXPECT_EQ(ErrorOf(R"({"limits": {"max_nodes": 1000}})"),
            "cfg.json: /limits/max_nodes: must be in [2, 64], got 1000");
  EXPECT_EQ(ErrorOf(R"({"limits": {"depth": 3}})"), "cfg.json: /limits/depth: unknown key");
  EXPECT_NE(ErrorOf(R"({"probabilities": {"tiny_var": 2}})").find("/probabilities/tiny_var"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"values": {"input_scales": [[1]]}})"),
            "cfg.json: /values/input_scales/0: expected [scale, weight]");
  EXPECT_EQ(ErrorOf(R"({"allow_nan_inf": 1})"), "cfg.json: /allow_nan_inf: expected true or false");
  EXPECT_EQ(ErrorOf(R"([1])"), "cfg.json: : expected an object, got array");
  EXPECT_EQ(
      ErrorOf(R"({"allowed_ops": ["Relu"], "op_weights": {"Relu": 0}})"),
      "cfg.json: /op_weights: every allowed op outside the classifier head (Flatten, Reshape, "
      "Gemm, MatMul) has weight 0: nothing can be generated");
}

}  // namespace
}  // namespace fusefuzz
