// The integer kernels' contract: a quantized convolution (uint8/int8 activations x int8 weights
// -> int32 accumulator -> requantized uint8/int8, with the activation folded into the integer
// clamp and an optional quantized residual) and a quantized Add, as raw NCHW buffers. No IR types
// here, so the straightforward loops (the exact reference every fast copy is tested against) and
// the per-ISA fast kernels share one definition of the arithmetic.
//
// The one requantization scheme (docs/kernels.md, "Int8"), float32 multiplier, as MLAS and
// oneDNN do it:
//   acc  = bias[m] + sum over taps (x - x_zero_point) * w            exact, int32
//   v    = float(acc) * multiplier[m]                                 float32, round to nearest
//   v    = v + float(r - residual_zero_point) * residual_multiplier   (residual only), float32
//   q    = round_half_to_even(v) + y_zero_point, saturated to [y_min, y_max]
// float(acc) is the correctly rounded int32 -> float32 conversion; v's rounding is exact math on
// the float32 value (implementations clamp v to a range the result saturates in anyway before
// converting). Padded input elements read as x_zero_point, so they add nothing to acc.
// Weights are symmetric (zero point 0), per output channel through `multiplier`.
#pragma once

#include <cstdint>

namespace fusefuzz::int8 {

enum class QStorage : uint8_t { kUint8, kInt8 };
inline int32_t QMin(QStorage t) { return t == QStorage::kUint8 ? 0 : -128; }
inline int32_t QMax(QStorage t) { return t == QStorage::kUint8 ? 255 : 127; }

// An 8-bit buffer of either storage type (int8 data is stored as its two's complement byte).
inline int32_t Load8(QStorage t, const uint8_t* p, int64_t i) {
  return t == QStorage::kUint8 ? static_cast<int32_t>(p[i])
                               : static_cast<int32_t>(static_cast<int8_t>(p[i]));
}

struct QConvProblem {
  // Input x: [n, c, h, w]; output y: [n, m, oh, ow]; weights [m, c / group, kh, kw].
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t m = 1, kh = 1, kw = 1;
  int64_t oh = 1, ow = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // bottom/right follow from oh, ow
  int64_t group = 1;
  QStorage x_type = QStorage::kUint8;
  int32_t x_zero_point = 0;
  const uint8_t* x = nullptr;
  const int8_t* weights = nullptr;
  const int32_t* bias = nullptr;      // [m], or null for none
  const float* multiplier = nullptr;  // [m]: s_x * s_w[m] / s_y, as float32
  // Optional residual r: [n, m, oh, ow], added after the conv's requantization multiply.
  const uint8_t* residual = nullptr;
  QStorage residual_type = QStorage::kUint8;
  int32_t residual_zero_point = 0;
  float residual_multiplier = 0;  // s_r / s_y
  QStorage y_type = QStorage::kUint8;
  int32_t y_zero_point = 0;
  int32_t y_min = 0,
          y_max = 255;  // within [QMin(y_type), QMax(y_type)]; ReLU: y_min = y_zero_point
  uint8_t* y = nullptr;
  // Optional (an extension for unfused pipelines, ONNX ConvInteger): when set, the conv writes
  // the int32 accumulator acc (bias included) to y_int32 [n, m, oh, ow] instead of y, and reads
  // none of multiplier, residual or the y_* fields. QRequantize is then the separate pass.
  int32_t* y_int32 = nullptr;
};

// Quantized Add: y = saturate(round(float(a - za) * ma + float(b - zb) * mb) + zy) elementwise
// over `count` elements of equal shape (ma = s_a / s_y, mb = s_b / s_y; float32 products, then
// one float32 add), clamped to [y_min, y_max] (a fused ReLU sets y_min = zy).
struct QAddProblem {
  int64_t count = 0;
  QStorage a_type = QStorage::kUint8, b_type = QStorage::kUint8, y_type = QStorage::kUint8;
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  float a_multiplier = 1, b_multiplier = 1;
  int32_t y_min = 0, y_max = 255;
  const uint8_t* a = nullptr;
  const uint8_t* b = nullptr;
  uint8_t* y = nullptr;
};

// The straightforward loops (kernels/fast/int8/qconv_loops.cc): the exact reference of every
// integer kernel, and what the embedded engine runs where no fast kernel applies.
void QConvLoops(const QConvProblem& p);
void QAddLoops(const QAddProblem& p);
// The requantization alone, as a separate pass over an int32 accumulator tensor acc
// [n, m, oh, ow] (a QConvLoops with y_int32 wrote it): y = the epilogue above with acc as given
// (p.bias, x, weights and y_int32 are not read).
void QRequantizeLoops(const QConvProblem& p, const int32_t* acc);

// The requantization step shared by both, exactly as the header comment defines it.
int32_t Requantize(float v, int32_t zero_point, int32_t lo, int32_t hi);

}  // namespace fusefuzz::int8
