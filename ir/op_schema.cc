// Attributes and params of every op. Defaults follow ONNX where ONNX defines the op.
#include <array>

#include "ir/ops.h"

namespace fusefuzz {
namespace {

AttrSpec Int(std::string name, int64_t def, std::string doc) {
  return {std::move(name), AttrType::kInt, false, 0, def, {}, {}, std::move(doc)};
}
AttrSpec IntReq(std::string name, std::string doc) {
  return {std::move(name), AttrType::kInt, true, 0, 0, {}, {}, std::move(doc)};
}
// Defaults are float32 values, like every float attribute read from JSON or ONNX.
AttrSpec Float(std::string name, double def, std::string doc) {
  return {std::move(name),
          AttrType::kFloat,
          false,
          static_cast<double>(static_cast<float>(def)),
          0,
          {},
          {},
          std::move(doc)};
}
AttrSpec FloatReq(std::string name, std::string doc) {
  return {std::move(name), AttrType::kFloat, true, 0, 0, {}, {}, std::move(doc)};
}
AttrSpec Ints(std::string name, std::vector<int64_t> def, std::string doc) {
  return {std::move(name), AttrType::kInts, false, 0, 0, std::move(def), {}, std::move(doc)};
}
AttrSpec IntsReq(std::string name, std::string doc) {
  return {std::move(name), AttrType::kInts, true, 0, 0, {}, {}, std::move(doc)};
}
AttrSpec String(std::string name, std::string def, std::string doc) {
  return {std::move(name), AttrType::kString, false, 0, 0, {}, std::move(def), std::move(doc)};
}

std::vector<AttrSpec> ConvAttrSpecs() {
  return {Ints("strides", {1, 1}, "[sH, sW], each >= 1"),
          Ints("dilations", {1, 1}, "[dH, dW], each >= 1"),
          Ints("pads", {0, 0, 0, 0}, "[top, left, bottom, right], each >= 0 (ONNX order)"),
          Int("group", 1, "C and M divisible by group; group == C is depthwise")};
}
std::vector<ParamSpec> ConvParams() {
  return {{"W", true, "[M, C/group, kH, kW]"}, {"B", false, "[M]"}};
}
std::vector<AttrSpec> PoolAttrSpecs(bool avg) {
  std::vector<AttrSpec> a = {
      IntsReq("kernel_shape", "[kH, kW], each >= 1"), Ints("strides", {1, 1}, "[sH, sW]"),
      Ints("pads", {0, 0, 0, 0}, "[top, left, bottom, right]; each < kernel size"),
      Ints("dilations", {1, 1}, "[dH, dW], each >= 1 (window taps every d-th element)"),
      Int("ceil_mode", 0,
          "0 or 1; 1: output size rounds up (ONNX; windows starting in right pad dropped)")};
  if (avg) a.push_back(Int("count_include_pad", 0, "0 or 1; 1: divide by kernel area incl. pads"));
  return a;
}

OpSchema MakeSchema(Op op) {
  const std::vector<ParamSpec> kNoParams;
  switch (op) {
    case Op::Conv:
      return {ConvAttrSpecs(), ConvParams(), "2-D convolution, NCHW, ONNX Conv"};
    case Op::FusedConv:
      return {ConvAttrSpecs(), ConvParams(),
              "Conv followed by its ordered epilogue (scale_shift, add, activation, clamp)"};
    case Op::BatchNorm:
      return {{Float("epsilon", 1e-5, "added to var inside the sqrt")},
              {{"scale", true, "[C]"},
               {"bias", true, "[C]"},
               {"mean", true, "[C]"},
               {"var", true, "[C], >= 0"}},
              "inference BatchNormalization: (x - mean) / sqrt(var + eps) * scale + bias"};
    case Op::LayerNorm:
      return {{Int("axis", 1, "normalize over dims [axis, rank)"),
               Float("epsilon", 1e-5, "added to the variance inside the sqrt")},
              {{"scale", true, "shape of input dims [axis, rank)"},
               {"bias", true, "shape of input dims [axis, rank)"}},
              "LayerNormalization (ONNX, stash_type float)"};
    case Op::GroupNorm:
      return {{IntReq("num_groups", "divides C"), Float("epsilon", 1e-5, "")},
              {{"scale", true, "[C]"}, {"bias", true, "[C]"}},
              "GroupNormalization (ONNX opset 21, per-channel scale/bias)"};
    case Op::InstanceNorm:
      return {{Float("epsilon", 1e-5, "")},
              {{"scale", true, "[C]"}, {"bias", true, "[C]"}},
              "InstanceNormalization"};
    case Op::Relu:
      return {{}, kNoParams, "max(x, 0)"};
    case Op::Relu6:
      return {{}, kNoParams, "min(max(x, 0), 6)"};
    case Op::Clip:
      return {{FloatReq("min", "lower bound"),
               FloatReq("max", "upper bound (min > max: every output is max)")},
              kNoParams,
              "min(max(x, min), max)"};
    case Op::LeakyRelu:
      return {{Float("alpha", 0.01, "slope for x < 0")}, kNoParams, "x >= 0 ? x : alpha*x"};
    case Op::PRelu:
      return {{},
              {{"slope", true,
                "broadcasts to the input from the right (ONNX): [C, 1, 1] per channel, [1], [W], "
                "[H, W], [C, H, W], ..."}},
              "x >= 0 ? x : slope*x (slope broadcast)"};
    case Op::Elu:
      return {{Float("alpha", 1.0, "")}, kNoParams, "x >= 0 ? x : alpha*(exp(x)-1)"};
    case Op::Sigmoid:
      return {{}, kNoParams, "1 / (1 + exp(-x))"};
    case Op::HardSigmoid:
      return {{Float("alpha", 0.2, ""), Float("beta", 0.5, "")},
              kNoParams,
              "max(0, min(1, alpha*x + beta))"};
    case Op::Tanh:
      return {{}, kNoParams, "tanh(x)"};
    case Op::Silu:
      return {{}, kNoParams, "x * sigmoid(x)"};
    case Op::HardSwish:
      return {{}, kNoParams, "x * max(0, min(1, x/6 + 1/2)) (ONNX)"};
    case Op::Gelu:
      return {{String("approximate", "none", "\"none\" (erf) or \"tanh\"")},
              kNoParams,
              "0.5x(1+erf(x/sqrt2)), or the tanh form (ONNX Gelu)"};
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Min:
    case Op::Max:
      return {{},
              {{"A", false, "constant left operand (scalar [1], [C], [1,C,1,1] or full)"},
               {"B", false, "constant right operand (same shapes)"}},
              "elementwise with numpy broadcasting; operands from inputs or constants"};
    case Op::Pad:
      return {{IntsReq("pads", "[top, left, bottom, right], each >= 0"),
               String("mode", "constant", "\"constant\", \"reflect\", \"edge\" or \"wrap\""),
               Float("value", 0.0, "constant mode fill value")},
              kNoParams,
              "spatial padding (ONNX Pad on H and W)"};
    case Op::MaxPool:
      return {PoolAttrSpecs(false), kNoParams, "max over windows; pads count as -inf"};
    case Op::AvgPool:
      return {PoolAttrSpecs(true), kNoParams, "average over windows (ONNX AveragePool)"};
    case Op::GlobalAvgPool:
      return {{}, kNoParams, "mean over H and W, output [N, C, 1, 1]"};
    case Op::Concat:
      return {{Int("axis", 1, "in [-rank, rank); every other dim must match")},
              kNoParams,
              "concatenate along `axis`"};
    case Op::Identity:
      return {{}, kNoParams, "y = x"};
    case Op::Flatten:
      return {{Int("axis", 1, "in [-rank, rank]; output [prod dims < axis, prod dims >= axis]")},
              kNoParams,
              "row-major reshape to rank 2 (ONNX Flatten)"};
    case Op::Reshape:
      return {{IntsReq("shape",
                       "target shape (ONNX Reshape's constant shape input): 0 copies the input "
                       "dim, one -1 is inferred")},
              kNoParams,
              "row-major reshape (ONNX Reshape, allowzero 0)"};
    case Op::Gemm:
      return {{Float("alpha", 1.0, "scales A'B'"), Float("beta", 1.0, "scales C"),
               Int("transA", 0, "0 or 1: A' = A^T"), Int("transB", 0, "0 or 1: B' = B^T")},
              {{"B", true, "[K, N], or [N, K] when transB"},
               {"C", false, "bias broadcastable to [M, N]: [1], [N], [1, N], [M, 1] or [M, N]"}},
              "Y = alpha * A' B' + beta * C, A of rank 2 (ONNX Gemm); epilogue: activations"};
    case Op::MatMul:
      return {{},
              {{"B", true, "constant right operand [K, N]"}},
              "matrix product over the last dim of A (rank >= 2) with a constant [K, N] "
              "(ONNX MatMul)"};
    case Op::QuantizeLinear:
      return {{},
              kNoParams,
              "y = saturate(round_half_even(x / s) + z), x / s in float32; quant \"y\" (ONNX)"};
    case Op::DequantizeLinear:
      return {{}, kNoParams, "y = (x - z) * s; quant \"x\" (ONNX DequantizeLinear)"};
    case Op::QLinearConv:
      return {ConvAttrSpecs(),
              {{"W", true, "[M, C/group, kH, kW], int8 integers"},
               {"B", false, "[M], int32 integers on the grid s_x * s_w (|B| <= 2^24)"}},
              "integer conv: Q_y(act(DQ(x) conv DQ(W) + B s_x s_w [+ DQ(r)])); epilogue: add "
              "(input 1), then at most one Relu, Relu6 or Clip"};
    case Op::QLinearAdd:
      return {{String("activation", "none", "\"none\" or \"relu\" (applied before Q_y)")},
              kNoParams,
              "y = Q_y(act(DQ_a(a) + DQ_b(b))), a and b of equal shape"};
    case Op::ReduceMean:
      return {{IntsReq("axes", "distinct dims in [-rank, rank), at least one"),
               Int("keepdims", 1, "0 or 1; 1: reduced dims stay as 1")},
              kNoParams,
              "mean over `axes` (ONNX ReduceMean; axes an attribute as before opset 18)"};
    case Op::Pow:
      return {{Float("exponent", 2.0, "one of 0.5, 1, 2, 3 (ONNX Pow's constant scalar Y)")},
              kNoParams,
              "x^exponent (ONNX Pow with a constant scalar exponent)"};
    case Op::Sqrt:
      return {{}, kNoParams, "sqrt(x); NaN for x < 0 (ONNX Sqrt)"};
    case Op::Reciprocal:
      return {{}, kNoParams, "1/x (ONNX Reciprocal)"};
    case Op::Exp:
      return {{}, kNoParams, "e^x (ONNX Exp)"};
    case Op::Log:
      return {{}, kNoParams, "ln(x); NaN for x < 0, -inf at 0 (ONNX Log)"};
    case Op::Erf:
      return {{}, kNoParams, "the error function (ONNX Erf)"};
    case Op::ReduceSum:
      return {{IntsReq("axes", "distinct dims in [-rank, rank), at least one"),
               Int("keepdims", 1, "0 or 1; 1: reduced dims stay as 1")},
              kNoParams,
              "sum over `axes` (ONNX ReduceSum; axes an input from opset 13)"};
    case Op::ReduceMax:
      return {{IntsReq("axes", "distinct dims in [-rank, rank), at least one"),
               Int("keepdims", 1, "0 or 1; 1: reduced dims stay as 1")},
              kNoParams,
              "max over `axes` (ONNX ReduceMax; axes an input from opset 18)"};
    case Op::Softmax:
      return {{Int("axis", -1, "in [-rank, rank): the one dim normalized over")},
              kNoParams,
              "exp(x - max) / sum exp(x - max) along `axis` (ONNX Softmax, opset-13 semantics)"};
    case Op::Transpose:
      return {{IntsReq("perm", "a permutation of 0..rank-1")},
              kNoParams,
              "y[i_perm[0], ..] = x[i_0, ..]: output dim d is input dim perm[d] (ONNX Transpose)"};
  }
  return {};
}

struct OpInfo {
  Op op;
  std::string_view name;
  OpFamily family;
  int min_inputs, max_inputs;
  Monotonicity monotone;
  RoundingClass rounding;
};
constexpr OpInfo kInfo[] = {
#define FF_OP(e, name, family, min_in, max_in, monotone, rounding) \
  {Op::e, name, OpFamily::family, min_in, max_in, Monotonicity::monotone, RoundingClass::rounding},
#include "ir/ops.def"
#undef FF_OP
};

// An activation must say which monotonicity and rounding class it has; no other op may.
constexpr bool ActivationColumnsConsistent() {
  for (const OpInfo& i : kInfo) {
    const bool act = i.family == OpFamily::kActivation;
    if (act != (i.monotone != Monotonicity::kNotActivation)) return false;
    if (act != (i.rounding != RoundingClass::kNotActivation)) return false;
  }
  return true;
}
static_assert(ActivationColumnsConsistent(),
              "ir/ops.def: set monotone and rounding for every activation, kNotActivation for "
              "every other op");

const OpInfo& InfoOf(Op op) { return kInfo[static_cast<int>(op)]; }

}  // namespace

const std::vector<Op>& AllOps() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (const auto& i : kInfo) v.push_back(i.op);
    return v;
  }();
  return ops;
}
std::string_view OpName(Op op) { return InfoOf(op).name; }
std::optional<Op> OpFromName(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.op;
  return std::nullopt;
}
OpFamily FamilyOf(Op op) { return InfoOf(op).family; }
Monotonicity MonotonicityOf(Op op) { return InfoOf(op).monotone; }
RoundingClass RoundingClassOf(Op op) { return InfoOf(op).rounding; }
std::string_view FamilyName(OpFamily f) {
  switch (f) {
    case OpFamily::kConv:
      return "conv";
    case OpFamily::kNorm:
      return "norm";
    case OpFamily::kActivation:
      return "activation";
    case OpFamily::kBinary:
      return "binary";
    case OpFamily::kPad:
      return "pad";
    case OpFamily::kPool:
      return "pool";
    case OpFamily::kConcat:
      return "concat";
    case OpFamily::kIdentity:
      return "identity";
    case OpFamily::kReshape:
      return "reshape";
    case OpFamily::kGemm:
      return "gemm";
    case OpFamily::kQuant:
      return "quant";
    case OpFamily::kReduce:
      return "reduce";
    case OpFamily::kMath:
      return "math";
    case OpFamily::kLayout:
      return "layout";
  }
  return "?";
}
int MinInputs(Op op) { return InfoOf(op).min_inputs; }
int MaxInputs(Op op) { return InfoOf(op).max_inputs; }

std::string_view AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kInt:
      return "integer";
    case AttrType::kFloat:
      return "number";
    case AttrType::kInts:
      return "array of integers";
    case AttrType::kString:
      return "string";
  }
  return "?";
}

const OpSchema& SchemaOf(Op op) {
  static const std::vector<OpSchema> schemas = [] {
    std::vector<OpSchema> v;
    for (const auto& i : kInfo) v.push_back(MakeSchema(i.op));
    return v;
  }();
  return schemas[static_cast<size_t>(op)];
}

const AttrSpec* FindAttrSpec(Op op, std::string_view name) {
  for (const auto& a : SchemaOf(op).attrs)
    if (a.name == name) return &a;
  return nullptr;
}
const ParamSpec* FindParamSpec(Op op, std::string_view name) {
  for (const auto& p : SchemaOf(op).params)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace fusefuzz
