// Static post-training quantization of a float graph into QDQ form, as ONNX Runtime's
// quantization tool (`quantize_static`, QuantFormat.QDQ) does it: per-channel symmetric int8
// weights, uint8 asymmetric activations calibrated on seeded inputs through fusefuzz's
// reference, int32 biases on the grid s_x * s_w (docs/quantization.md, "fusefuzz quantize").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

enum class CalibrationMethod { kMinMax, kPercentile };

// Whose quantization the model imitates (`quantize --flavor`, docs/quantization.md).
//   kOnnxRuntime  quantize_static's QDQ placement: Conv and Add only, pools and Gemm float,
//                 graph outputs float; weights int8 [-127, 127], scale max|W| / 127.
//   kPyTorch      the points PyTorch's eager and FX post-training flows quantize (onednn /
//                 fbgemm qconfig): besides Conv and Add, the Gemm (nn.Linear: its input, weights
//                 and output), the pools, Flatten and Reshape on their input's grid (PyTorch
//                 runs them on the quantized tensor, sharing its qparams), and a graph output
//                 made by a quantized op through Q -> DQ (the DeQuantStub); weights
//                 per_channel_symmetric qint8: scale max|W| / 127.5, integers in [-128, 127].
enum class QuantizeFlavor { kOnnxRuntime, kPyTorch };

struct QuantizeOptions {
  int calibration_inputs = 8;  // N seeded inputs (InputsFromSeed(g, seed + i), i < N)
  // 1: the seeds of `fusefuzz check`'s samples (1, 2, ...). The seeded sampler varies the
  // inputs' magnitude from seed to seed on purpose, so a model calibrated on other seeds
  // saturates or collapses on check's samples (docs/quantization.md).
  uint64_t seed = 1;
  // Real inputs to calibrate on (`quantize --calibration-data FILE`, each a tensors file with
  // every model input): when given, they replace the seeded ones.
  std::vector<TensorMap> calibration_data;
  CalibrationMethod method = CalibrationMethod::kMinMax;
  // kPercentile: the range is [P(100 - p), P(p)] of all calibration values of the tensor, widened
  // to hold 0 (ONNX Runtime's percentile calibrator defaults to 99.999).
  double percentile = 99.999;
  // Each graph output v becomes the integers of a QuantizeLinear(v) calibrated like any
  // activation (uint8), so that `fusefuzz check` judges the model's outputs on their grid, in
  // steps, instead of as floats (a deployment that takes uint8 logits).
  bool integer_outputs = false;
  // Weights on 7 bits, [-64, 64] (ONNX Runtime's reduce_range): a uint8 x int8 kernel without
  // VNNI (MLAS's and oneDNN's vpmaddubsw) sums two products in a saturating int16, and
  // 2 * 255 * 64 fits in it where 2 * 255 * 127 does not.
  bool reduce_range = false;
  QuantizeFlavor flavor = QuantizeFlavor::kOnnxRuntime;
};

struct QuantizeSummary {
  int64_t convs = 0;               // Conv nodes given int8 weights (and an int32 bias)
  int64_t gemms = 0;               // Gemm nodes given int8 weights (flavor pytorch)
  int64_t activations = 0;         // values given a QuantizeLinear -> DequantizeLinear pair
  int64_t float_biases = 0;        // convs whose bias stays float: its integers exceed 2^24
  std::vector<std::string> notes;  // what stayed float, and why
};

// The ONNX Runtime range -> (scale, zero point) rule for uint8 activations: the range is widened
// to hold 0, scale = float32((hi - lo) / 255), zero point = round(-lo / scale) clamped to
// [0, 255]; a range narrower than float32's smallest normal gets scale 1, zero point 0.
QuantParams ActivationParams(double lo, double hi);

// Per-channel symmetric int8 weights along axis 0: scale[m] = float32(max |W[m]| / qmax), zero
// point 0, qmax = WeightQmax(reduce_range) (ONNX Runtime's symmetric int8 range is [-127, 127],
// [-64, 64] with reduce_range); an all-zero channel gets scale 1.
// kPyTorch: scale[m] = float32(max |W[m]| / 127.5) (PyTorch's symmetric qint8 rule,
// max / ((quant_max - quant_min) / 2)), integers in [-128, 127]; `axis` the output channel's.
QuantParams WeightParams(const Tensor& w, bool reduce_range = false,
                         QuantizeFlavor flavor = QuantizeFlavor::kOnnxRuntime, int64_t axis = 0);
int WeightQmax(bool reduce_range);

// `g` must be a verified float graph (no quantized op): throws InputError naming the node
// otherwise, and when options are out of range. The returned graph is verified.
Graph QuantizeStatic(const Graph& g, const QuantizeOptions& options,
                     QuantizeSummary* summary = nullptr);

}  // namespace fusefuzz
