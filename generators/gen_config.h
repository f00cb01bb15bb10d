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
  double reuse_intermediate = 0.2;   // else from an inner value of the previous pattern instance
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

  // Input shape (generator.cc).
  double batch_one = 0.7;      // the graph input has N = 1 (else N in [2, max_batch])
  double tiny_spatial = 0.1;   // the graph input has H in {1, 2}
  double square_input = 0.75;  // the graph input has W == H
  double nan_inf_input = 0.5;  // with allow_nan_inf: an input tensor gets NaN/Inf elements

  // Choices shared by several emitters.
  double swap_operands = 0.5;  // operand order of a binary op between two values, Concat order
  double reuse_operand =
      0.5;  // second operand: an existing value of the same shape, not a new input

  // Conv geometry (gen_ops.cc).
  double non_square_kernel = 0.15;   // kW drawn apart from kH
  double equal_strides = 0.8;        // sW == sH when strided
  double symmetric_pads = 0.6;       // "same"-style pads when the pads are not asymmetric
  double wide_pads = 0.12;           // some pad >= the kernel extent (1x1 convs get pads)
  double single_out_channel = 0.06;  // an ungrouped conv has M == 1

  // FusedConv epilogues.
  double epilogue_add_full_shape =
      0.7;  // a fresh add operand has the conv's shape (else [1,M,1,1])

  // Normalizations.
  double explicit_default_eps = 0.2;      // the default epsilon is written out as an attribute
  double norm_negative_scale = 0.3;       // LayerNorm/GroupNorm/InstanceNorm scale all negative
  double bn_negative_gamma = 0.2;         // per channel: BN gamma negative
  double bn_special_gamma_channel = 0.5;  // per channel, with bn_special_gamma: the special value
  double tiny_var_channel = 0.7;          // per channel, with tiny_var: the tiny variance

  // Activations.
  double clip_table_bounds = 0.7;   // Clip bounds from the table of kinks (else random)
  double prelu_scalar_slope = 0.3;  // PRelu slope of shape [1] (else per channel [C, 1, 1])
  // A PRelu node's slope (not [1]) broadcasts along other dims ([W], [H, W], [C, H, W], ...)
  double prelu_broadcast_slope = 0.2;
  double elu_small_alpha = 0.5;  // with nondefault_act_params: Elu alpha 0.5 (else 2)
  double gelu_tanh = 0.5;        // with nondefault_act_params: Gelu tanh form
  double pattern_relu = 0.35;    // an activation inside a pattern is Relu
  double pattern_relu6 = 0.15;   // ... else Relu6 (else any allowed activation)

  // Binary ops.
  // Constant operands (gen_ops.cc ConstShape / ConstOperand).
  double const_foldable = 0.6;     // scalar or per-channel (else any other broadcast mask)
  double const_per_channel = 0.5;  // with const_foldable: per channel when C > 1 (else scalar)
  double const_full_rank = 0.6;    // written with rank 4 (else any rank that keeps the mask)
  double const_zeros = 0.1;        // some entries exactly 0 (never for a divisor)
  double const_positive = 0.15;    // all entries > 0
  double const_negative = 0.15;    // all entries < 0
  double pad_negative_zero = 0.1;  // a zero-fill Pad writes -0 (conv pads are +0)
  double clip_point = 0.05;        // random Clip bounds with min == max
  double clip_inverted = 0.05;     // random Clip bounds with min > max (output = max)

  // Pools and Concat.
  double square_pool_window = 0.8;
  double symmetric_pool_pads = 0.6;  // per axis, with pool_pads: end pad == begin pad
  double concat_two_inputs = 0.9;    // a single Concat joins x with an existing value
  double concat_spatial = 0.2;       // a single Concat joins along H or W (else channels)
  double pool_dilation = 0.15;       // an unpadded MaxPool window has dilation 2
  double pad_edge_wrap = 0.4;        // a reflect-shaped Pad is "edge" instead (wrap: not exported)

  // The classifier head (gen_head.cc): after the body, [GlobalAvgPool] -> Flatten/Reshape ->
  // Gemm or MatMul + Add -> [BatchNorm] -> [activation] -> [Mul], rank 2 from the flatten on.
  double classifier_head = 0.12;
  double head_global_pool = 0.5;  // GlobalAvgPool before the flatten (ResNet/MobileNet)
  double head_trans_b = 0.6;      // Gemm B stored [N, K] (transB = 1, PyTorch Linear)
  double head_gemm_bias = 0.8;    // Gemm has C
  double head_bias_shape = 0.3;   // C (or MatMul's Add constant) is not [N]: [1], [1,N], [M,1]..
  double head_alpha_beta = 0.15;  // Gemm alpha and beta != 1
  double head_bn = 0.35;          // BatchNorm1d after the matrix op
  double head_act = 0.5;          // an activation after it
  double head_mul = 0.3;          // Mul by a broadcast constant at the end

  // Pattern families (gen_patterns.cc).
  double bn_conv_pad = 0.25;            // bn_conv: an explicit Pad between BN and Conv
  double bn_conv_unpadded = 0.5;        // bn_conv: the conv has no pads (the foldable case)
  double residual_full_block = 0.6;     // residual: the 7-node BasicBlock when it fits
  double pad_conv_unpadded = 0.7;       // pad_then_window: the conv has no pads of its own
  double se_reduce = 0.5;               // squeeze_excite: a reducing conv + activation first
  double se_hard_sigmoid = 0.3;         // squeeze_excite: HardSigmoid gate (else Sigmoid)
  double permutation_same_shape = 0.6;  // permutation: a conv keeps the shape
  double permutation_skip = 0.6;        // permutation: add is a skip connection when possible
  double concat_conv_branch = 0.6;      // concat_branches: a branch is a conv
  double concat_second_branch = 0.5;    // concat_branches: both inputs are branches
  double pattern_fused_conv = 0.12;     // a pattern's conv is a FusedConv (where not folded)
  double conv_const_act = 0.25;         // conv_const: an activation between conv and op
  double act_then_add = 0.3;            // conv_act_pool: Add of a value after the activation
  double act_then_max_pool = 0.5;       // conv_act_pool: else MaxPool after the activation
  double conv_act_pool_fused = 0.35;    // conv_act_pool: the conv is a FusedConv
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

// The quantized generator (`--quant`, generators/gen_quant.cc, docs/generator.md "Quantized
// graphs"): QDQ graphs calibrated like a post-training quantization flow, then pushed toward the
// preconditions of the real int8 fusion bugs (issue 24). Probabilities are in [0, 1]; block
// weights >= 0.
struct GenQuant {
  bool enabled = false;
  // DQ -> MaxPool -> Q with a negative scale may appear (a target's hello can forbid it).
  bool allow_negative_scale = true;
  // Tensor parameters.
  double int8_activations = 0.4;     // a quantized activation tensor is int8 (else uint8)
  double per_axis_activation = 0.1;  // a requantize / MaxPool Q is per channel (axis 1)
  double power_of_two_scale = 0.2;   // scale rounded to a power of two (ties)
  double near_power_of_two = 0.12;   // ... else a few float32 ulps off one
  double edge_zero_point = 0.35;     // zero point from {qmin, qmin+1, mid, qmax-1, qmax}
  double saturate = 0.25;            // range shrunk until 5-20% of the elements saturate
  double calibrate_after_act = 0.5;  // range of act(u) (Relu: z = qmin), else of u
  double clip_near_edge = 0.6;       // a Clip's bounds within a step of the range's edges
  double relu6_short_range = 0.35;   // Relu6 -> Q with s (qmax - z) < 6 (else beyond 6)
  // Conv blocks.
  double per_channel_weights = 0.6;
  double weight_zero_point = 0.04;  // a weight grid with a zero point (not fusable)
  double bias_grid_off = 0.12;      // the bias grid's scale is not s_x * s_w
  double bias_zero_point = 0.06;    // the bias grid has a zero point
  double bn = 0.35;                 // a BatchNorm after the conv (before the activation)
  double activation = 0.65;         // Relu / Relu6 / Clip before the Q
  double pad = 0.2;                 // a Pad on the integers before the DQ
  double pad_zero_point = 0.4;      // its value is the zero point (else 0, or another integer)
  double pad_zero = 0.3;
  double pad_off_grid = 0.1;  // else a float Pad after the DQ: 0, on the grid or off it
  double qlinear = 0.15;      // the block is written as QLinearConv / QLinearAdd directly
  // Requantization with other parameters: a requant block's Q, a MaxPool block's Q.
  double requant_new_params = 0.4;
  double maxpool_new_params = 0.25;
  double act_new_params = 1;  // an act block's Q recalibrated (else its input's parameters)
  // Structure.
  double share_dq = 0.2;              // a block reads an existing DQ (its output fans out)
  double reuse_value = 0.25;          // a block reads an older quantized value (fan-out of a Q)
  double intermediate_output = 0.15;  // a quantized intermediate is also a graph output
  // Defaults that reach classes no other setting reaches (issue 41), each at a small rate:
  double negative_scale = 0.08;  // a per-tensor MaxPool block reads its DQ with scale < 0
  double add_fan_out = 0.06;     // an Add's sum is also quantized before its Relu (two users)
  double float_output = 0.4;     // the last value is dequantized to a float output
  // Block weights.
  double conv_weight = 4, add_weight = 2, maxpool_weight = 1, act_weight = 1.5, requant_weight = 1,
         twin_weight = 0.7;
  bool operator==(const GenQuant&) const = default;
};

struct GenConfig {
  std::map<Op, double> op_weights;  // weight of each op in the "single" pattern
  std::map<Pattern, double> pattern_weights;
  std::set<Op> allowed_ops;  // the generator emits only these (a target's supported ops)
  GenLimits limits;
  GenProbabilities probabilities;
  GenValues values;
  bool allow_nan_inf = false;
  GenQuant quant;
  // Spellings (ir/spellings.def) the generator may give a node: the target's (campaign/), empty
  // for the embedded target. A node that can take one of them gets one with spelling_rate, drawn
  // after the whole graph (generators/gen_spellings.cc): the graph itself is the same.
  std::set<std::string> spellings;
  double spelling_rate = 0.15;

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
