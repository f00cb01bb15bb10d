#include "generators/gen_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "ir/error.h"

namespace fusefuzz {
namespace {

struct PatternInfo {
  Pattern p;
  std::string_view name;
  double weight;
  int min_budget;
};
constexpr PatternInfo kPatterns[] = {
#define FF_PATTERN(e, name, weight, min_budget) {Pattern::k##e, name, weight, min_budget},
#include "generators/patterns.def"
#undef FF_PATTERN
};

double DefaultOpWeight(Op op) {
  switch (op) {
    case Op::Conv:
      return 4;
    case Op::FusedConv:
      return 0.3;
    case Op::BatchNorm:
      return 3;
    case Op::Relu:
      return 2;
    case Op::Add:
      return 2;
    case Op::Mul:
      return 1.5;
    case Op::Relu6:
    case Op::Clip:
    case Op::Sub:
      return 1;
    case Op::GlobalAvgPool:
    case Op::Identity:
      return 0.3;
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::Gelu:
    case Op::Concat:
      return 0.5;
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::HardSwish:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
      return 0.7;
  }
  return 0.7;
}

using LimitField = std::pair<const char*, int64_t GenLimits::*>;
constexpr LimitField kLimitFields[] = {
    {"min_nodes", &GenLimits::min_nodes},     {"max_nodes", &GenLimits::max_nodes},
    {"max_batch", &GenLimits::max_batch},     {"max_channels", &GenLimits::max_channels},
    {"max_spatial", &GenLimits::max_spatial}, {"max_kernel", &GenLimits::max_kernel},
    {"max_outputs", &GenLimits::max_outputs},
};
using ProbField = std::pair<const char*, double GenProbabilities::*>;
constexpr ProbField kProbFields[] = {
    {"reuse_value", &GenProbabilities::reuse_value},
    {"reuse_intermediate", &GenProbabilities::reuse_intermediate},
    {"intermediate_output", &GenProbabilities::intermediate_output},
    {"conv_bias", &GenProbabilities::conv_bias},
    {"large_bias", &GenProbabilities::large_bias},
    {"grouped", &GenProbabilities::grouped},
    {"depthwise", &GenProbabilities::depthwise},
    {"stride", &GenProbabilities::stride},
    {"dilation", &GenProbabilities::dilation},
    {"asymmetric_pads", &GenProbabilities::asymmetric_pads},
    {"bn_special_gamma", &GenProbabilities::bn_special_gamma},
    {"tiny_var", &GenProbabilities::tiny_var},
    {"nondefault_act_params", &GenProbabilities::nondefault_act_params},
    {"binary_with_value", &GenProbabilities::binary_with_value},
    {"const_on_left", &GenProbabilities::const_on_left},
    {"pool_pads", &GenProbabilities::pool_pads},
    {"ceil_mode", &GenProbabilities::ceil_mode},
    {"count_include_pad", &GenProbabilities::count_include_pad},
    {"special_weights", &GenProbabilities::special_weights},
    {"batch_one", &GenProbabilities::batch_one},
    {"tiny_spatial", &GenProbabilities::tiny_spatial},
    {"square_input", &GenProbabilities::square_input},
    {"nan_inf_input", &GenProbabilities::nan_inf_input},
    {"swap_operands", &GenProbabilities::swap_operands},
    {"reuse_operand", &GenProbabilities::reuse_operand},
    {"non_square_kernel", &GenProbabilities::non_square_kernel},
    {"equal_strides", &GenProbabilities::equal_strides},
    {"symmetric_pads", &GenProbabilities::symmetric_pads},
    {"wide_pads", &GenProbabilities::wide_pads},
    {"single_out_channel", &GenProbabilities::single_out_channel},
    {"epilogue_add_full_shape", &GenProbabilities::epilogue_add_full_shape},
    {"explicit_default_eps", &GenProbabilities::explicit_default_eps},
    {"norm_negative_scale", &GenProbabilities::norm_negative_scale},
    {"bn_negative_gamma", &GenProbabilities::bn_negative_gamma},
    {"bn_special_gamma_channel", &GenProbabilities::bn_special_gamma_channel},
    {"tiny_var_channel", &GenProbabilities::tiny_var_channel},
    {"clip_table_bounds", &GenProbabilities::clip_table_bounds},
    {"prelu_scalar_slope", &GenProbabilities::prelu_scalar_slope},
    {"elu_small_alpha", &GenProbabilities::elu_small_alpha},
    {"gelu_tanh", &GenProbabilities::gelu_tanh},
    {"pattern_relu", &GenProbabilities::pattern_relu},
    {"pattern_relu6", &GenProbabilities::pattern_relu6},
    {"const_foldable", &GenProbabilities::const_foldable},
    {"const_per_channel", &GenProbabilities::const_per_channel},
    {"const_full_rank", &GenProbabilities::const_full_rank},
    {"const_zeros", &GenProbabilities::const_zeros},
    {"const_positive", &GenProbabilities::const_positive},
    {"const_negative", &GenProbabilities::const_negative},
    {"pad_negative_zero", &GenProbabilities::pad_negative_zero},
    {"clip_point", &GenProbabilities::clip_point},
    {"clip_inverted", &GenProbabilities::clip_inverted},
    {"square_pool_window", &GenProbabilities::square_pool_window},
    {"symmetric_pool_pads", &GenProbabilities::symmetric_pool_pads},
    {"concat_two_inputs", &GenProbabilities::concat_two_inputs},
    {"bn_conv_pad", &GenProbabilities::bn_conv_pad},
    {"bn_conv_unpadded", &GenProbabilities::bn_conv_unpadded},
    {"residual_full_block", &GenProbabilities::residual_full_block},
    {"pad_conv_unpadded", &GenProbabilities::pad_conv_unpadded},
    {"se_reduce", &GenProbabilities::se_reduce},
    {"se_hard_sigmoid", &GenProbabilities::se_hard_sigmoid},
    {"permutation_same_shape", &GenProbabilities::permutation_same_shape},
    {"permutation_skip", &GenProbabilities::permutation_skip},
    {"concat_conv_branch", &GenProbabilities::concat_conv_branch},
    {"concat_second_branch", &GenProbabilities::concat_second_branch},
    {"pattern_fused_conv", &GenProbabilities::pattern_fused_conv},
    {"conv_const_act", &GenProbabilities::conv_const_act},
    {"act_then_add", &GenProbabilities::act_then_add},
    {"act_then_max_pool", &GenProbabilities::act_then_max_pool},
    {"conv_act_pool_fused", &GenProbabilities::conv_act_pool_fused},
};
using ValueField = std::pair<const char*, double GenValues::*>;
constexpr ValueField kValueFields[] = {
    {"exact_zero", &GenValues::exact_zero},
    {"kink_value", &GenValues::kink_value},
    {"positive_input", &GenValues::positive_input},
    {"nan_inf", &GenValues::nan_inf},
};

[[noreturn]] void Bad(const std::string& source, const std::string& ptr, const std::string& what) {
  throw InputError(source + ": " + ptr, what);
}

double GetNumber(const nlohmann::json& v, const std::string& source, const std::string& ptr) {
  if (!v.is_number()) Bad(source, ptr, "expected a number, got " + std::string(v.type_name()));
  double d = v.get<double>();
  if (!std::isfinite(d)) Bad(source, ptr, "expected a finite number");
  return d;
}

int64_t GetInt(const nlohmann::json& v, const std::string& source, const std::string& ptr) {
  if (!v.is_number_integer()) {
    Bad(source, ptr, "expected an integer, got " + std::string(v.type_name()));
  }
  return v.get<int64_t>();
}

void ExpectObject(const nlohmann::json& v, const std::string& source, const std::string& ptr) {
  if (!v.is_object()) Bad(source, ptr, "expected an object, got " + std::string(v.type_name()));
}

std::optional<Pattern> PatternFromName(std::string_view name) {
  for (const auto& p : kPatterns)
    if (p.name == name) return p.p;
  return std::nullopt;
}

void CheckProb(double p, const std::string& source, const std::string& ptr) {
  if (!(p >= 0 && p <= 1))
    Bad(source, ptr, "probability must be in [0, 1], got " + std::to_string(p));
}

}  // namespace

const std::vector<Pattern>& AllPatterns() {
  static const std::vector<Pattern> all = [] {
    std::vector<Pattern> v;
    for (const auto& p : kPatterns) v.push_back(p.p);
    return v;
  }();
  return all;
}
std::string_view PatternName(Pattern p) { return kPatterns[static_cast<int>(p)].name; }
int PatternMinBudget(Pattern p) { return kPatterns[static_cast<int>(p)].min_budget; }

GenConfig::GenConfig() {
  for (Op op : AllOps()) {
    op_weights[op] = DefaultOpWeight(op);
    allowed_ops.insert(op);
  }
  for (const auto& p : kPatterns) pattern_weights[p.p] = p.weight;
}

void ValidateConfig(const GenConfig& c, const std::string& source) {
  const GenLimits& l = c.limits;
  auto range = [&](const char* key, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      Bad(source, std::string("/limits/") + key,
          "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
              std::to_string(v));
    }
  };
  range("min_nodes", l.min_nodes, 1, 64);
  range("max_nodes", l.max_nodes, l.min_nodes, 64);
  range("max_batch", l.max_batch, 1, 8);
  range("max_channels", l.max_channels, 1, 64);
  range("max_spatial", l.max_spatial, 1, 64);
  range("max_kernel", l.max_kernel, 1, 7);
  range("max_outputs", l.max_outputs, 1, 8);
  for (const auto& [name, field] : kProbFields) {
    CheckProb(c.probabilities.*field, source, std::string("/probabilities/") + name);
  }
  for (const auto& [name, field] : kValueFields) {
    CheckProb(c.values.*field, source, std::string("/values/") + name);
  }
  if (c.values.input_scales.empty()) Bad(source, "/values/input_scales", "must not be empty");
  double scale_total = 0;
  for (size_t i = 0; i < c.values.input_scales.size(); ++i) {
    auto [s, w] = c.values.input_scales[i];
    std::string ptr = "/values/input_scales/" + std::to_string(i);
    if (!(s > 0 && s <= 1e6)) Bad(source, ptr + "/0", "scale must be in (0, 1e6]");
    if (!(w >= 0 && std::isfinite(w))) Bad(source, ptr + "/1", "weight must be >= 0");
    scale_total += w;
  }
  if (!(scale_total > 0)) Bad(source, "/values/input_scales", "weights sum to 0");
  for (const auto& [op, w] : c.op_weights) {
    if (!(w >= 0 && std::isfinite(w))) {
      Bad(source, "/op_weights/" + std::string(OpName(op)), "weight must be finite and >= 0");
    }
  }
  for (const auto& [p, w] : c.pattern_weights) {
    if (!(w >= 0 && std::isfinite(w))) {
      Bad(source, "/pattern_weights/" + std::string(PatternName(p)),
          "weight must be finite and >= 0");
    }
  }
  if (c.allowed_ops.empty()) Bad(source, "/allowed_ops", "no op allowed");
  double op_total = 0;
  for (Op op : c.allowed_ops) {
    auto it = c.op_weights.find(op);
    if (it != c.op_weights.end()) op_total += it->second;
  }
  if (!(op_total > 0)) {
    Bad(source, "/op_weights", "every allowed op has weight 0: nothing can be generated");
  }
}

GenConfig ConfigFromJson(const nlohmann::json& j, const std::string& source) {
  GenConfig c;
  ExpectObject(j, source, "");
  for (const auto& [key, v] : j.items()) {
    std::string ptr = "/" + key;
    if (key == "op_weights") {
      ExpectObject(v, source, ptr);
      for (const auto& [name, w] : v.items()) {
        auto op = OpFromName(name);
        if (!op) Bad(source, ptr + "/" + name, "unknown op '" + name + "'");
        c.op_weights[*op] = GetNumber(w, source, ptr + "/" + name);
      }
    } else if (key == "pattern_weights") {
      ExpectObject(v, source, ptr);
      for (const auto& [name, w] : v.items()) {
        auto p = PatternFromName(name);
        if (!p) Bad(source, ptr + "/" + name, "unknown pattern '" + name + "'");
        c.pattern_weights[*p] = GetNumber(w, source, ptr + "/" + name);
      }
    } else if (key == "allowed_ops") {
      if (!v.is_array()) Bad(source, ptr, "expected an array of op names");
      c.allowed_ops.clear();
      for (size_t i = 0; i < v.size(); ++i) {
        std::string p = ptr + "/" + std::to_string(i);
        if (!v[i].is_string()) Bad(source, p, "expected an op name (string)");
        auto op = OpFromName(v[i].get<std::string>());
        if (!op) Bad(source, p, "unknown op '" + v[i].get<std::string>() + "'");
        c.allowed_ops.insert(*op);
      }
    } else if (key == "limits") {
      ExpectObject(v, source, ptr);
      for (const auto& [name, x] : v.items()) {
        bool found = false;
        for (const auto& [fname, field] : kLimitFields) {
          if (name == fname) {
            c.limits.*field = GetInt(x, source, ptr + "/" + name);
            found = true;
          }
        }
        if (!found) Bad(source, ptr + "/" + name, "unknown key");
      }
    } else if (key == "probabilities") {
      ExpectObject(v, source, ptr);
      for (const auto& [name, x] : v.items()) {
        bool found = false;
        for (const auto& [fname, field] : kProbFields) {
          if (name == fname) {
            c.probabilities.*field = GetNumber(x, source, ptr + "/" + name);
            found = true;
          }
        }
        if (!found) Bad(source, ptr + "/" + name, "unknown key");
      }
    } else if (key == "values") {
      ExpectObject(v, source, ptr);
      for (const auto& [name, x] : v.items()) {
        std::string p = ptr + "/" + name;
        if (name == "input_scales") {
          if (!x.is_array()) Bad(source, p, "expected an array of [scale, weight] pairs");
          c.values.input_scales.clear();
          for (size_t i = 0; i < x.size(); ++i) {
            std::string pi = p + "/" + std::to_string(i);
            if (!x[i].is_array() || x[i].size() != 2) Bad(source, pi, "expected [scale, weight]");
            c.values.input_scales.emplace_back(GetNumber(x[i][0], source, pi + "/0"),
                                               GetNumber(x[i][1], source, pi + "/1"));
          }
          continue;
        }
        bool found = false;
        for (const auto& [fname, field] : kValueFields) {
          if (name == fname) {
            c.values.*field = GetNumber(x, source, p);
            found = true;
          }
        }
        if (!found) Bad(source, p, "unknown key");
      }
    } else if (key == "allow_nan_inf") {
      if (!v.is_boolean()) Bad(source, ptr, "expected true or false");
      c.allow_nan_inf = v.get<bool>();
    } else {
      Bad(source, ptr, "unknown key");
    }
  }
  ValidateConfig(c, source);
  return c;
}

nlohmann::json ConfigToJson(const GenConfig& c) {
  nlohmann::json j;
  nlohmann::json ow = nlohmann::json::object();
  for (const auto& [op, w] : c.op_weights) ow[std::string(OpName(op))] = w;
  j["op_weights"] = ow;
  nlohmann::json pw = nlohmann::json::object();
  for (const auto& [p, w] : c.pattern_weights) pw[std::string(PatternName(p))] = w;
  j["pattern_weights"] = pw;
  nlohmann::json ao = nlohmann::json::array();
  for (Op op : c.allowed_ops) ao.push_back(std::string(OpName(op)));
  j["allowed_ops"] = ao;
  nlohmann::json lim = nlohmann::json::object();
  for (const auto& [name, field] : kLimitFields) lim[name] = c.limits.*field;
  j["limits"] = lim;
  nlohmann::json pr = nlohmann::json::object();
  for (const auto& [name, field] : kProbFields) pr[name] = c.probabilities.*field;
  j["probabilities"] = pr;
  nlohmann::json va = nlohmann::json::object();
  nlohmann::json scales = nlohmann::json::array();
  for (const auto& [s, w] : c.values.input_scales) scales.push_back({s, w});
  va["input_scales"] = scales;
  for (const auto& [name, field] : kValueFields) va[name] = c.values.*field;
  j["values"] = va;
  j["allow_nan_inf"] = c.allow_nan_inf;
  return j;
}

std::string ConfigDump(const GenConfig& c) { return ConfigToJson(c).dump(); }

}  // namespace fusefuzz
