// Quantization parameters (docs/quantization.md). Tensors stay float32: a quantized tensor holds
// the integers themselves as floats (exact for 8-bit values and int32 values up to 2^24), so
// ONNX's QuantizeLinear / DequantizeLinear map 1:1 and every pass that moves float tensors keeps
// working.
//
// A node's QuantMap is keyed by role:
//   QuantizeLinear   "y"              y = saturate(round_half_even(x / s) + z)
//   DequantizeLinear "x"              y = (x - z) * s
//   QLinearConv      "x", "w", "y", and "r" when it has a residual input
//   QLinearAdd       "a", "b", "y"
//   Conv, FusedConv  optional "W", "B": declares that the param lies on that grid
//   Gemm             optional "B" (its weight), "C" (its bias): same
// On float ops the role is the name of the param it declares (value = s * (q - z) in float32).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ops.h"
#include "ir/tensor.h"

namespace fusefuzz {

enum class QuantType { kUint8, kInt8, kInt32 };
std::string_view QuantTypeName(QuantType t);  // "uint8", "int8", "int32"
std::optional<QuantType> QuantTypeFromName(std::string_view name);
int64_t QMin(QuantType t);
int64_t QMax(QuantType t);

// Integers of a quantized tensor are exact in float32 up to this magnitude; the verifier refuses
// int32 values (biases) beyond it.
inline constexpr int64_t kMaxExactInt = int64_t{1} << 24;

struct QuantParams {
  QuantType type = QuantType::kUint8;
  std::vector<double> scale = {1.0};  // float32 values held as doubles
  std::vector<int64_t> zero_point = {0};
  int64_t axis = -1;  // -1: per tensor (scale and zero_point of length 1); else per axis
  bool operator==(const QuantParams&) const = default;

  bool PerAxis() const { return axis >= 0; }
  int64_t qmin() const { return QMin(type); }
  int64_t qmax() const { return QMax(type); }
  // Parameters of channel c along `axis` (any c for per-tensor params).
  double Scale(int64_t c) const { return scale[PerAxis() ? static_cast<size_t>(c) : 0]; }
  int64_t ZeroPoint(int64_t c) const { return zero_point[PerAxis() ? static_cast<size_t>(c) : 0]; }
};
using QuantMap = std::map<std::string, QuantParams>;

// Per-tensor params.
QuantParams PerTensor(QuantType type, double scale, int64_t zero_point);

// Throws InputError(where, ...) naming the field ("scale[1]", "zero_point[0]", "axis"):
// scale finite, a float32 value, and > 0 (or < 0 when allow_negative_scale; never 0), zero point
// in [qmin, qmax], scale and zero_point of equal length, per tensor: length 1 and axis -1; per
// axis: axis >= 0 and, when `channels` >= 0, length == channels.
void Validate(const QuantParams& q, int64_t channels, bool allow_negative_scale,
              const std::string& where);
// Same for params applied to a tensor of `shape`: a per-axis axis must be < rank and the length
// equal to shape[axis].
void ValidateFor(const QuantParams& q, const Shape& shape, bool allow_negative_scale,
                 const std::string& where);

// The channel (index along q.axis) of flat element `i` of a tensor of `shape`; 0 per tensor.
int64_t QuantChannel(const QuantParams& q, const Shape& shape, int64_t i);

// Calls fn(i, scale, zero_point) for every flat element i of a tensor of `shape`, in order, with
// the parameters of its channel along q.axis (the same for all elements per tensor). The one walk
// of every per-element use of QuantParams (verifier, kernels, ONNX import and export): the
// channel is a loop counter, not a division per element. `q` must be valid for `shape`
// (ValidateFor); an axis outside the shape is a logic error.
template <typename Fn>
void ForEachQuantElement(const QuantParams& q, const Shape& shape, Fn&& fn) {
  size_t outer = 1, channels = 1, inner = 1;
  if (q.PerAxis()) {
    const size_t axis = static_cast<size_t>(q.axis);
    if (axis >= shape.size()) throw std::logic_error("ForEachQuantElement: axis outside shape");
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(shape[d]);
    channels = static_cast<size_t>(shape[axis]);
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  } else {
    for (int64_t d : shape) inner *= static_cast<size_t>(d);
  }
  size_t i = 0;
  for (size_t o = 0; o < outer; ++o) {
    for (size_t c = 0; c < channels; ++c) {
      const double s = q.Scale(static_cast<int64_t>(c));
      const int64_t z = q.ZeroPoint(static_cast<int64_t>(c));
      for (size_t k = 0; k < inner; ++k) fn(i++, s, z);
    }
  }
}

// ONNX QuantizeLinear of one float32 value: x / s in float32, round half to even, + z, saturate.
// NaN quantizes to the zero point... ONNX leaves it undefined; we saturate NaN to z (documented).
float QuantizeOnnx(float x, float scale, int64_t zero_point, QuantType type);
// ONNX DequantizeLinear of one integer, as ONNX Runtime computes it: q - z in integers, that
// difference converted to float32, times the float32 scale. (Subtracting in float32 instead
// rounds q - z when it exceeds 2^24, which an int32 bias with a large zero point reaches.)
float DequantizeOnnxInt(int64_t q, float scale, int64_t zero_point);
// The same for an integer held in a float (exact below 2^24, as every 8-bit value is).
float DequantizeOnnx(float q, float scale, int64_t zero_point);

// True when `v` is a value DequantizeLinear can produce on (s, z, type): v ==
// DequantizeOnnxInt(q, float32(s), z) for an integer q in [qmin, qmax] (for int32: |q| <= 2^24),
// so that an exported grid param imports back to the same float. Sets *q_out to that q.
bool OnGrid(float v, double scale, int64_t zero_point, QuantType type, int64_t* q_out = nullptr);

// Roles of an op's QuantMap (see the table above).
struct QuantRoleSpec {
  std::string role;
  bool required;
  std::string doc;
};
const std::vector<QuantRoleSpec>& QuantRolesOf(Op op);
const QuantRoleSpec* FindQuantRole(Op op, std::string_view role);

// Compact text, e.g. "u8 s=0.05 z=128" or "i8 axis=0 s=[0.01,0.02] z=[0,0]".
std::string QuantText(const QuantParams& q);

// The outputs of these ops hold integers (judged by the integer-grid oracle).
inline bool ProducesQuantized(Op op) {
  return op == Op::QuantizeLinear || op == Op::QLinearConv || op == Op::QLinearAdd;
}

}  // namespace fusefuzz
