#include "campaign/campaign_constraints.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "harness/check.h"

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
  if (!c.requantize) q.requant_new_params = q.maxpool_new_params = q.act_new_params = 0;
  if (!c.integer_pads) q.pad = q.pad_off_grid = 0;
  if (!c.weight_zero_points) q.weight_zero_point = 0;
}

namespace {

// Type names with digits; longest first, so that "uint8" is not read as "int8" inside it.
constexpr std::string_view kTypeNames[] = {"bfloat16", "float16", "float32", "float64", "quint8",
                                           "qint32",   "uint16",  "uint32",  "uint64",  "qint8",
                                           "int16",    "int32",   "int64",   "uint8",   "int8"};

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A marker of letters only, which ErrorClass keeps as it is.
std::string Marker(size_t k) { return std::string("FFTYPE") + char('A' + k) + "Z"; }

}  // namespace

std::string UnsupportedReasonClass(const std::string& message) {
  std::string protected_text;
  for (size_t i = 0; i < message.size();) {
    bool replaced = false;
    if (i == 0 || !WordChar(message[i - 1])) {
      for (size_t k = 0; k < std::size(kTypeNames); ++k) {
        const std::string_view t = kTypeNames[k];
        const size_t end = i + t.size();
        if (message.compare(i, t.size(), t) == 0 &&
            (end == message.size() || !WordChar(message[end]))) {
          protected_text += Marker(k);
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) protected_text += message[i++];
  }
  std::string out = ErrorClass(protected_text);
  for (size_t k = 0; k < std::size(kTypeNames); ++k) {
    const std::string m = Marker(k);
    for (size_t at = out.find(m); at != std::string::npos; at = out.find(m, at)) {
      out.replace(at, m.size(), kTypeNames[k]);
      at += kTypeNames[k].size();
    }
  }
  return out;
}

}  // namespace fusefuzz
