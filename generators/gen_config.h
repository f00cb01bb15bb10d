// The generator's configuration: what to emit and how often. Every field has a default, every
// field can be set from JSON (unknown keys are errors), and the whole config can be dumped back
// to JSON so a reproducer records exactly how its case was generated (provenance).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ops.h"

namespace fusefuzz {

enum class Pattern {
#define FF_PATTERN(e, name, weight, min_budget) k##e,
#include "generators/patterns.def"
#undef FF_PATTERN
};
const std::vector<Pattern>& AllPatterns();
std::string_view PatternName(Pattern p);
int PatternMinBudget(Pattern p);

struct GenLimits {
  int64_t min_nodes = 2;
  int64_t max_nodes = 12;
  int64_t max_batch = 2;
  int64_t max_channels = 16;
  int64_t max_spatial = 16;  // H and W of inputs and (mostly) of intermediates
  int64_t max_kernel = 5;    // conv kernel side
  int64_t max_outputs = 3;
  bool operator==(const GenLimits&) const = default;
};

// Probabilities of the bug-prone choices (each in [0, 1]).
struct GenProbabilities {
  double reuse_value = 0.25;         // feed a step from an older value: a second consumer
  double intermediate_output = 0.3;  // also make an intermediate a graph output
  double conv_bias = 0.6;
  double large_bias = 0.15;  // conv bias of magnitude ~100
  double grouped = 0.2;      // group in {2, 4} when it divides C
  double depthwise = 0.25;   // group == C, with channel multiplier 1..3
  double stride = 0.3;
  double dilation = 0.2;
  double asymmetric_pads = 0.3;
  double bn_special_gamma = 0.3;  // gamma negative, zero or tiny
  double tiny_var = 0.25;         // var ~1e-6..1e-3 so that eps matters
  double nondefault_act_params = 0.5;
  double binary_with_value = 0.35;  // binary op between two values instead of a constant
  double const_on_left = 0.4;       // constant as operand A (c - x, c / x)
  double pool_pads = 0.4;
  double ceil_mode = 0.3;
  double count_include_pad = 0.5;
  double special_weights = 0.15;  // conv weights with zeros / powers of two
  bool operator==(const GenProbabilities&) const = default;
};

struct GenValues {
  // Input tensors are zero-mean uniform times a scale picked from these (scale, weight) pairs.
  std::vector<std::pair<double, double>> input_scales = {
      {1e-3, 0.5}, {1e-2, 0.5}, {0.1, 1}, {1.0, 4}, {10.0, 1}, {100.0, 0.5}, {1e3, 0.5}};
  double exact_zero = 0.05;     // fraction of input elements set to exactly 0
  double kink_value = 0.05;     // fraction set to an activation kink (0, +-1, +-3, 6, ...)
  double positive_input = 0.1;  // probability that an input tensor is all >= 0
  double nan_inf = 0.01;        // fraction of NaN/+-Inf elements, only if allow_nan_inf
  bool operator==(const GenValues&) const = default;
};

struct GenConfig {
  std::map<Op, double> op_weights;  // weight of each op in the "single" pattern
  std::map<Pattern, double> pattern_weights;
  std::set<Op> allowed_ops;  // the generator emits only these (a target's supported ops)
  GenLimits limits;
  GenProbabilities probabilities;
  GenValues values;
  bool allow_nan_inf = false;

  GenConfig();  // the defaults documented in docs/generator.md
  bool operator==(const GenConfig&) const = default;
};

// Reads a (partial) config: absent keys keep their defaults. Throws InputError whose location is
// "<source>: <JSON pointer>" for unknown keys, wrong types and out-of-range values.
GenConfig ConfigFromJson(const nlohmann::json& j, const std::string& source = "config");
// The complete config (every key), the form stored in reproducers as provenance.
nlohmann::json ConfigToJson(const GenConfig& c);
// One-line JSON dump, for log lines and provenance headers.
std::string ConfigDump(const GenConfig& c);
// Checks ranges and consistency (also done by ConfigFromJson); throws InputError.
void ValidateConfig(const GenConfig& c, const std::string& source = "config");

}  // namespace fusefuzz
