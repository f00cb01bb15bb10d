#include "ir/quant.h"

#include <cmath>
#include <sstream>

#include "ir/error.h"

namespace fusefuzz {

std::string_view QuantTypeName(QuantType t) {
  switch (t) {
    case QuantType::kUint8:
      return "uint8";
    case QuantType::kInt8:
      return "int8";
    case QuantType::kInt32:
      return "int32";
  }
  return "?";
}

std::optional<QuantType> QuantTypeFromName(std::string_view name) {
  for (QuantType t : {QuantType::kUint8, QuantType::kInt8, QuantType::kInt32}) {
    if (QuantTypeName(t) == name) return t;
  }
  return std::nullopt;
}

int64_t QMin(QuantType t) {
  switch (t) {
    case QuantType::kUint8:
      return 0;
    case QuantType::kInt8:
      return -128;
    case QuantType::kInt32:
      return INT32_MIN;
  }
  return 0;
}

int64_t QMax(QuantType t) {
  switch (t) {
    case QuantType::kUint8:
      return 255;
    case QuantType::kInt8:
      return 127;
    case QuantType::kInt32:
      return INT32_MAX;
  }
  return 0;
}

QuantParams PerTensor(QuantType type, double scale, int64_t zero_point) {
  QuantParams q;
  q.type = type;
  q.scale = {scale};
  q.zero_point = {zero_point};
  return q;
}

void Validate(const QuantParams& q, int64_t channels, bool allow_negative_scale,
              const std::string& where) {
  if (q.scale.empty()) throw InputError(where, "scale must not be empty");
  if (q.scale.size() != q.zero_point.size()) {
    throw InputError(where, "scale has " + std::to_string(q.scale.size()) +
                                " entries but zero_point has " +
                                std::to_string(q.zero_point.size()));
  }
  if (q.axis < -1) throw InputError(where + " axis", "must be >= 0 (or absent: per tensor)");
  if (!q.PerAxis() && q.scale.size() != 1) {
    throw InputError(where + " scale", "per tensor (no axis) needs exactly one scale, got " +
                                           std::to_string(q.scale.size()) +
                                           " (per axis: give \"axis\")");
  }
  if (q.PerAxis() && channels >= 0 && static_cast<int64_t>(q.scale.size()) != channels) {
    throw InputError(where + " scale",
                     "per axis " + std::to_string(q.axis) + " needs " + std::to_string(channels) +
                         " entries (the dimension), got " + std::to_string(q.scale.size()));
  }
  for (size_t i = 0; i < q.scale.size(); ++i) {
    const std::string f = where + " scale[" + std::to_string(i) + "]";
    const double s = q.scale[i];
    if (!std::isfinite(s)) throw InputError(f, "must be finite, got " + std::to_string(s));
    if (s == 0) throw InputError(f, "must not be 0");
    if (static_cast<double>(static_cast<float>(s)) != s) {
      throw InputError(f, "must be a float32 value (ONNX stores scales as float)");
    }
    if (std::fpclassify(static_cast<float>(s)) == FP_SUBNORMAL) {
      throw InputError(f, "must not be a subnormal float32 (x / s overflows)");
    }
    if (s < 0 && !allow_negative_scale) {
      throw InputError(f, "must be > 0, got " + std::to_string(s) +
                              " (negative scales only with the graph option "
                              "\"allow_negative_scale\")");
    }
  }
  for (size_t i = 0; i < q.zero_point.size(); ++i) {
    const int64_t z = q.zero_point[i];
    if (z < q.qmin() || z > q.qmax()) {
      throw InputError(where + " zero_point[" + std::to_string(i) + "]",
                       std::to_string(z) + " is outside the " + std::string(QuantTypeName(q.type)) +
                           " range [" + std::to_string(q.qmin()) + ", " + std::to_string(q.qmax()) +
                           "]");
    }
  }
}

void ValidateFor(const QuantParams& q, const Shape& shape, bool allow_negative_scale,
                 const std::string& where) {
  int64_t channels = -1;
  if (q.PerAxis()) {
    if (q.axis >= static_cast<int64_t>(shape.size())) {
      throw InputError(where + " axis",
                       std::to_string(q.axis) + " is not a dimension of " + ShapeToString(shape));
    }
    channels = shape[static_cast<size_t>(q.axis)];
  }
  Validate(q, channels, allow_negative_scale, where);
}

int64_t QuantChannel(const QuantParams& q, const Shape& shape, int64_t i) {
  if (!q.PerAxis()) return 0;
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(q.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return (i / inner) % shape[static_cast<size_t>(q.axis)];
}

float QuantizeOnnx(float x, float scale, int64_t zero_point, QuantType type) {
  const float r = x / scale;  // float32, as ONNX
  const double lo = static_cast<double>(QMin(type)), hi = static_cast<double>(QMax(type));
  if (std::isnan(r)) return static_cast<float>(zero_point);
  // nearbyint in the default rounding mode is round half to even.
  const double v = std::nearbyint(static_cast<double>(r)) + static_cast<double>(zero_point);
  return static_cast<float>(v < lo ? lo : v > hi ? hi : v);
}

float DequantizeOnnxInt(int64_t q, float scale, int64_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

float DequantizeOnnx(float q, float scale, int64_t zero_point) {
  // q - z in double is exact for every integer q a float holds and every int32 zero point.
  return static_cast<float>(static_cast<double>(q) - static_cast<double>(zero_point)) * scale;
}

bool OnGrid(float v, double scale, int64_t zero_point, QuantType type, int64_t* q_out) {
  if (!std::isfinite(v)) return false;
  const float s32 = static_cast<float>(scale);
  const double r = std::nearbyint(static_cast<double>(v) / static_cast<double>(s32));
  if (std::fabs(r) > 4.0 * static_cast<double>(kMaxExactInt)) return false;
  const int64_t lo = type == QuantType::kInt32 ? -kMaxExactInt : QMin(type);
  const int64_t hi = type == QuantType::kInt32 ? kMaxExactInt : QMax(type);
  // r is q - z up to the float32 roundings of q - z and of the product: under 2^-23 of |r| each,
  // so one step below 2^22 and a few more up to the 2^26 allowed; nearest candidates first.
  const int64_t span = 1 + (static_cast<int64_t>(std::fabs(r)) >> 22);
  for (int64_t i = 0; i <= 2 * span; ++i) {
    const int64_t d = (i % 2 == 0) ? i / 2 : -(i + 1) / 2;
    const int64_t k = static_cast<int64_t>(r) + d;  // k = q - z
    const int64_t q = k + zero_point;
    if (q < lo || q > hi) continue;
    if (DequantizeOnnxInt(q, s32, zero_point) == v) {
      if (q_out) *q_out = q;
      return true;
    }
  }
  return false;
}

namespace {

std::vector<QuantRoleSpec> MakeRoles(Op op) {
  switch (op) {
    case Op::QuantizeLinear:
      return {{"y", true, "uint8 or int8; per tensor or per axis of the input"}};
    case Op::DequantizeLinear:
      return {{"x", true, "uint8, int8 or int32; per tensor or per axis of the input"}};
    case Op::QLinearConv:
      return {{"x", true, "input 0: uint8 or int8, per tensor"},
              {"w", true, "W: int8, zero point 0, per tensor or per axis 0"},
              {"y", true, "output: uint8 or int8, per tensor"},
              {"r", false, "input 1 (the residual), required with it: uint8 or int8, per tensor"}};
    case Op::QLinearAdd:
      return {{"a", true, "input 0: uint8 or int8, per tensor"},
              {"b", true, "input 1: uint8 or int8, per tensor"},
              {"y", true, "output: uint8 or int8, per tensor"}};
    case Op::Conv:
    case Op::FusedConv:
      return {{"W", false, "W lies on this grid (int8 or uint8; per tensor or per axis)"},
              {"B", false, "B lies on this grid (int32; s_x * s_w when from a QDQ model)"}};
    case Op::Gemm:
      return {{"B", false, "the weight B lies on this grid (int8 or uint8)"},
              {"C", false, "the bias C lies on this grid (int32)"}};
    case Op::BatchNorm:
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pad:
    case Op::MaxPool:
    case Op::AvgPool:
    case Op::GlobalAvgPool:
    case Op::Concat:
    case Op::Identity:
    case Op::Flatten:
    case Op::Reshape:
    case Op::MatMul:
    case Op::ReduceMean:
    case Op::Pow:
    case Op::Sqrt:
    case Op::Reciprocal:
    case Op::Exp:
    case Op::Log:
    case Op::Erf:
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      return {};
  }
  return {};
}

}  // namespace

const std::vector<QuantRoleSpec>& QuantRolesOf(Op op) {
  static const std::vector<std::vector<QuantRoleSpec>> roles = [] {
    std::vector<std::vector<QuantRoleSpec>> v;
    for (Op o : AllOps()) v.push_back(MakeRoles(o));
    return v;
  }();
  return roles[static_cast<size_t>(op)];
}

const QuantRoleSpec* FindQuantRole(Op op, std::string_view role) {
  for (const auto& r : QuantRolesOf(op))
    if (r.role == role) return &r;
  return nullptr;
}

namespace {
std::string Num(double d) {
  std::ostringstream o;
  o.precision(9);
  o << static_cast<float>(d);
  return o.str();
}
}  // namespace

std::string QuantText(const QuantParams& q) {
  std::string t = q.type == QuantType::kUint8 ? "u8" : q.type == QuantType::kInt8 ? "i8" : "i32";
  if (!q.PerAxis()) return t + " s=" + Num(q.scale[0]) + " z=" + std::to_string(q.zero_point[0]);
  t += " axis=" + std::to_string(q.axis) + " s=[";
  for (size_t i = 0; i < q.scale.size(); ++i) t += (i ? "," : "") + Num(q.scale[i]);
  t += "] z=[";
  for (size_t i = 0; i < q.zero_point.size(); ++i) {
    t += (i ? "," : "") + std::to_string(q.zero_point[i]);
  }
  return t + "]";
}

}  // namespace fusefuzz
