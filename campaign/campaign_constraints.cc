#include "campaign/campaign_constraints.h"

#include <algorithm>

namespace fusefuzz {

void ApplyTargetConstraints(const TargetConstraints& c, GenConfig* cfg) {
  GenQuant& q = cfg->quant;
  const auto takes = [&](const char* type) {
    return c.activation_types.empty() ||
           std::find(c.activation_types.begin(), c.activation_types.end(), type) !=
               c.activation_types.end();
  };
  if (!takes("int8")) q.int8_activations = 0;
  if (!takes("uint8")) q.int8_activations = 1;
  if (!c.per_axis_activations) q.per_axis_activation = 0;
  if (!c.shared_quantized_values) {
    q.share_dq = 0;
    q.reuse_value = 0;
  }
  if (!c.quantized_graph_outputs) q.intermediate_output = 0;
  if (!c.fan_out_before_activation) q.add_fan_out = 0;
  if (!c.negative_scales) q.allow_negative_scale = false;
}

}  // namespace fusefuzz
