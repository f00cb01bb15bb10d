#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "generators/coverage.h"
#include "generators/generator.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

GenConfig QuantConfig() {
  GenConfig c;
  c.quant.enabled = true;
  return c;
}

TEST(QuantGenerator, GraphsVerifyWithinLimitsAndUseTheQuantizedOps) {
  const GenConfig cfg = QuantConfig();
  std::map<Op, int> ops;
  for (uint64_t seed = 0; seed < 1500; ++seed) {
    const GeneratedCase c = GenerateFromSeed(seed, cfg);
    ASSERT_NO_THROW(VerifyGraph(c.graph)) << "seed " << seed;
    EXPECT_LE(int64_t(c.graph.nodes.size()), cfg.limits.max_nodes) << "seed " << seed;
    EXPECT_LE(int64_t(c.graph.outputs.size()), cfg.limits.max_outputs) << "seed " << seed;
    for (const Node& n : c.graph.nodes) ++ops[n.op];
  }
  for (Op op : {Op::QuantizeLinear, Op::DequantizeLinear, Op::QLinearConv, Op::QLinearAdd, Op::Conv,
                Op::BatchNorm, Op::MaxPool, Op::Pad, Op::Add, Op::Relu, Op::Relu6, Op::Clip}) {
    EXPECT_GT(ops[op], 0) << OpName(op);
  }
}

TEST(QuantGenerator, SameSeedSameGraphAndInputs) {
  const GenConfig cfg = QuantConfig();
  for (uint64_t seed : {3u, 77u, 1234u}) {
    const GeneratedCase a = GenerateFromSeed(seed, cfg), b = GenerateFromSeed(seed, cfg);
    EXPECT_EQ(GraphToJson(a.graph).dump(), GraphToJson(b.graph).dump());
    ASSERT_EQ(a.inputs.size(), b.inputs.size());
    for (const auto& [name, t] : a.inputs) EXPECT_TRUE(t.BitwiseEquals(b.inputs.at(name)));
  }
}

TEST(QuantGenerator, OnlyAllowedOps) {
  GenConfig cfg = QuantConfig();
  cfg.allowed_ops = {Op::QuantizeLinear, Op::DequantizeLinear, Op::Conv, Op::Relu, Op::Add};
  for (uint64_t seed = 0; seed < 300; ++seed) {
    for (const Node& n : GenerateFromSeed(seed, cfg).graph.nodes) {
      EXPECT_TRUE(cfg.allowed_ops.count(n.op)) << OpName(n.op) << " seed " << seed;
    }
  }
  cfg.allowed_ops = {Op::Conv, Op::Relu};
  EXPECT_THROW(GenerateFromSeed(1, cfg), InputError);
}

// Negative scales at a small default rate (issue 41: no default campaign reached the class),
// none when allow_negative_scale is off (a target's hello "negative_scales": false).
TEST(QuantGenerator, NegativeScalesByDefaultUnlessForbidden) {
  GenConfig cfg = QuantConfig();
  int negative = 0;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    const Graph g = GenerateFromSeed(seed, cfg).graph;
    negative += g.options.allow_negative_scale;
    ASSERT_NO_THROW(VerifyGraph(g));
  }
  EXPECT_GT(negative, 3);
  EXPECT_LT(negative, 100);  // a small rate: most graphs test the ordinary fusions
  cfg.quant.allow_negative_scale = false;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    EXPECT_FALSE(GenerateFromSeed(seed, cfg).graph.options.allow_negative_scale);
  }
}

// An Add's sum also quantized before its Relu (two users: Add + Relu not fusable), at a small
// default rate, never with add_fan_out 0.
TEST(QuantGenerator, AddFanOutBeforeRelu) {
  GenConfig cfg = QuantConfig();
  cfg.quant.add_weight = 8;
  CoverageTally t;
  for (uint64_t seed = 0; seed < 300; ++seed) t.AddGraph(GenerateFromSeed(seed, cfg).graph);
  EXPECT_GT(t.graphs_with["quant/add_fan_out_before_relu"], 0);
  cfg.quant.add_fan_out = 0;
  CoverageTally none;
  for (uint64_t seed = 0; seed < 300; ++seed) none.AddGraph(GenerateFromSeed(seed, cfg).graph);
  EXPECT_EQ(none.graphs_with["quant/add_fan_out_before_relu"], 0);
}

TEST(QuantGenerator, ConfigRoundTripsAndRefusesBadValues) {
  GenConfig cfg = QuantConfig();
  cfg.quant.saturate = 0.5;
  const GenConfig back = ConfigFromJson(ConfigToJson(cfg));
  EXPECT_EQ(back, cfg);
  // A float config's dump has no "quant" key: float provenance is unchanged.
  EXPECT_FALSE(ConfigToJson(GenConfig()).contains("quant"));
  EXPECT_THROW(ConfigFromJson(nlohmann::json::parse(R"({"quant": {"saturate": 2}})")), InputError);
  EXPECT_THROW(ConfigFromJson(nlohmann::json::parse(R"({"quant": {"nope": 1}})")), InputError);
  EXPECT_THROW(ConfigFromJson(nlohmann::json::parse(R"({"quant": {"enabled": 1}})")), InputError);
}

// Every "quant/" class of coverage.def is reached by the quantized generator; none by the float
// one. Fixed seeds: deterministic.
TEST(QuantGenerator, ReachesEveryQuantClass) {
  GenConfig cfg = QuantConfig();
  cfg.quant.allow_negative_scale = true;
  CoverageTally t;
  constexpr uint64_t kGraphs = 3000;
  for (uint64_t seed = 0; seed < kGraphs; ++seed) {
    const GeneratedCase c = GenerateFromSeed(seed, cfg);
    t.AddGraph(c.graph);
    t.Add(ClassifyQuantValues(c.graph, c.inputs));
  }
  std::string missing;
  for (const auto& c : AllCoverageClasses()) {
    if (c.group == "quant" && t.graphs_with[c.id] == 0) missing += "  " + c.id + "\n";
  }
  EXPECT_EQ(missing, "") << "quantized classes never generated in " << kGraphs << " graphs:\n"
                         << missing;
  // The common QDQ conv is not starved by the rare classes.
  EXPECT_GT(t.Share("quant/bias_grid_exact"), 0.1);
}

}  // namespace
}  // namespace fusefuzz
