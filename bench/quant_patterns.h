// The int8 benchmark patterns (bench/int8_cases.h: conv_requant, conv_bn_relu_requant,
// conv_add_relu_requant, dw_relu6_requant) as quantized graphs in QDQ form, the form a
// post-training-quantized model carries and every quantized target accepts
// (docs/quantization.md), so that `fusefuzz bench --target T --quant` can send them to any engine:
//
//   conv_requant           x(u8) -> DQ -> Conv -> Q
//   conv_bn_relu_requant   x(u8) -> DQ -> Conv (BN folded into W and B) -> Relu -> Q
//   conv_add_relu_requant  x(u8) -> DQ -> Conv -> Q -> DQ ─┐
//                          r(u8) -> DQ ───────────────────-┴> Add -> Relu -> Q
//   dw_relu6_requant       x(u8) -> DQ -> depthwise Conv -> Relu6 -> Q
//
// uint8 activations (per tensor; or int8, as TensorFlow Lite's models and XNNPACK's per-channel
// qc8 convolution have them), int8 weights per output channel (symmetric, zero point 0), the
// bias on int32 at float32(s_x * s_w[m]); the graph inputs hold integers (the layer's input is
// the previous layer's quantized output, real 0 at the type's qmin as after a ReLU) and the graph
// output is the last Q. Every Q is calibrated as a static post-training flow calibrates it
// (min/max of the reference's values after the activation, docs/quantization.md "fusefuzz
// quantize"), so Relu and Relu6 outputs get zero point qmin and the ranges the engines' QDQ
// fusions expect. The residual pattern quantizes
// the conv's output before the Add, as such a model does (a Q after every Conv and Add): the
// engines fuse QLinearConv and QLinearAdd(+Relu), not the residual into the conv's epilogue.
#pragma once

#include <string>

#include "bench/fusion_patterns.h"
#include "bench/int8_cases.h"
#include "ir/quant.h"

namespace fusefuzz {

// "BM_FusionInt8/<pattern>/<model>/<shape>": the kernel rows' name without the variant; int8
// activations append "_I8" to the shape.
std::string QuantCaseName(const Int8BenchCase& c, QuantType activations = QuantType::kUint8);

// The pattern's graph on the layer (verified) and its inputs: deterministic integers.
// `activations`: kUint8 or kInt8.
BuiltCase BuildQuantCase(const Int8BenchCase& c, QuantType activations = QuantType::kUint8);

}  // namespace fusefuzz
