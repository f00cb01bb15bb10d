#include "campaign/campaign_constraints.h"

#include <gtest/gtest.h>

#include "generators/generator.h"

namespace fusefuzz {
namespace {

TEST(CampaignConstraints, NoConstraintChangesNothing) {
  GenConfig cfg;
  ApplyTargetConstraints({}, &cfg);
  EXPECT_EQ(cfg, GenConfig{});
}

TEST(CampaignConstraints, EachConstraintTurnsItsClassOff) {
  TargetConstraints c;
  c.activation_types = {"uint8"};
  c.per_axis_activations = false;
  c.shared_quantized_values = false;
  c.quantized_graph_outputs = false;
  c.fan_out_before_activation = false;
  c.negative_scales = false;
  c.requantize = false;
  c.weight_zero_points = false;
  c.integer_pads = false;
  GenConfig cfg;
  ApplyTargetConstraints(c, &cfg);
  const GenQuant& q = cfg.quant;
  EXPECT_EQ(q.requant_new_params, 0);
  EXPECT_EQ(q.maxpool_new_params, 0);
  EXPECT_EQ(q.weight_zero_point, 0);
  EXPECT_EQ(q.act_new_params, 0);
  EXPECT_EQ(q.pad, 0);
  EXPECT_EQ(q.pad_off_grid, 0);
  EXPECT_EQ(q.int8_activations, 0);
  EXPECT_EQ(q.per_axis_activation, 0);
  EXPECT_EQ(q.share_dq, 0);
  EXPECT_EQ(q.reuse_value, 0);
  EXPECT_EQ(q.intermediate_output, 0);
  EXPECT_EQ(q.add_fan_out, 0);
  EXPECT_FALSE(q.allow_negative_scale);
  c.activation_types = {"int8"};
  ApplyTargetConstraints(c, &cfg);
  EXPECT_EQ(cfg.quant.int8_activations, 1);
}

// The generator honours them: uint8 per-tensor activations with positive scales only.
TEST(CampaignConstraints, GeneratedGraphsKeepThem) {
  TargetConstraints c;
  c.activation_types = {"uint8"};
  c.per_axis_activations = false;
  c.negative_scales = false;
  GenConfig cfg;
  cfg.quant.enabled = true;
  ApplyTargetConstraints(c, &cfg);
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const Graph g = GenerateFromSeed(seed, cfg).graph;
    EXPECT_FALSE(g.options.allow_negative_scale) << seed;
    for (const Node& n : g.nodes) {
      if (n.op != Op::QuantizeLinear) continue;
      const QuantParams& y = n.quant.at("y");
      EXPECT_EQ(y.type, QuantType::kUint8) << "seed " << seed << " node " << n.name;
      EXPECT_FALSE(y.PerAxis()) << "seed " << seed << " node " << n.name;
    }
  }
}

TEST(CampaignConstraints, UnsupportedReasonsKeepTypeNames) {
  EXPECT_EQ(UnsupportedReasonClass("target error: node 'q3': int8 activations, scale 0.25"),
            "target error: node *: int8 activations, scale #");
  EXPECT_EQ(UnsupportedReasonClass("uint8 and torch.quint8, not xint8"),
            "uint8 and torch.quint8, not xint#");
}

}  // namespace
}  // namespace fusefuzz
