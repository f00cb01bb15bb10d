// The int8 benchmark cases (bench/isa_bench BM_IsaInt8 rows, bench/fusion_bench BM_FusionInt8
// rows; docs/kernels.md "Int8"): one quantized conv layer with its pattern's epilogue, as
//   fused    one int8::QConvPlan run (conv, requantization, clamp, residual in the epilogue)
//   unfused  the conv to int32 (y_int32), then a requantize pass, an Add pass (QAdd) and a
//            clamp pass over the whole tensor, each a separate kernel, as an engine without
//            int8 fusion runs QLinearConv's pieces
//   float32  the float FusedConv of the same layer and epilogue (the fast kernels' conv entry)
// with deterministic data: u8 activations (zero point 0, as after a ReLU), int8 weights,
// per-channel multipliers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/int8/qconv.h"
#include "kernels/fast/int8/qconv_fast.h"

namespace fusefuzz {

// N = 1, stride 1, "same" padding k / 2; c, h the input, m the output channels.
struct QLayer {
  const char* model;
  int64_t c, h, m, k, group;
};

enum class QPattern {
  kConvRequant,         // conv -> requantize
  kConvBnReluRequant,   // conv (BN folded) -> ReLU -> requantize
  kConvAddReluRequant,  // conv -> Add(residual) -> ReLU -> requantize
  kDwRelu6Requant,      // depthwise conv -> ReLU6 -> requantize
};
const char* QPatternName(QPattern p);  // "conv_requant", ...

// "N1_C64_H56_K3[_M..][_G..]" (_M when m != c).
std::string QShapeName(const QLayer& l);

// 2 * multiply-adds of the layer's conv (the GOPS of every int8 row, kernel or graph).
double QLayerOps(const QLayer& l);

// One int8 benchmark row: a pattern on a layer.
struct Int8BenchCase {
  QPattern pattern;
  QLayer layer;
};
// Every int8 row, in table order: the ResNet-18 3x3 stages and the MobileNetV2 1x1 expand /
// project and depthwise layers, as bench/fusion_bench's BM_FusionInt8 rows and
// `fusefuzz bench --target --quant` (bench/quant_patterns.h) list them.
std::vector<Int8BenchCase> Int8BenchCases();

class QCase {
 public:
  QCase(const QLayer& l, QPattern pattern);
  QCase(const QCase&) = delete;
  QCase& operator=(const QCase&) = delete;

  // 2 * multiply-adds of the conv: the same for every variant, so GOPS ratios are speedups.
  double Ops() const;
  const QLayer& layer() const { return l_; }
  QPattern pattern() const { return pattern_; }

  void RunFused(int threads) const;  // the plan of the level given to Prepare
  void RunUnfused(int threads);
  void RunFloat(int threads);
  // Packs the weights for `isa` (not timed, as oneDNN's weight reorder is not).
  void Prepare(FastIsa isa);

 private:
  int8::QConvProblem Problem() const;

  QLayer l_;
  QPattern pattern_;
  FastIsa isa_ = FastIsa::kAuto;
  std::vector<uint8_t> x_, residual_, y_, t_;
  std::vector<int8_t> w_;
  std::vector<int32_t> bias_, acc_;
  std::vector<float> mult_;
  std::unique_ptr<int8::QConvPlan> plan_;  // fused and unfused (y_int32) alike
  // The float32 layer.
  Node node_;
  Tensor fx_, fresidual_, fy_;
};

}  // namespace fusefuzz
