// Internal to the generator: quantized graphs (`--quant`, docs/generator.md "Quantized graphs").
// A graph is a chain of blocks on quantized values (QDQ conv, add, MaxPool, activation,
// requantize, twin convs sharing a weight), each ending in a QuantizeLinear whose scale and zero
// point are calibrated on the reference's values of the float tensor it quantizes (as a
// post-training quantization flow does), then pushed toward the preconditions of real int8
// fusion bugs: power-of-two scales, edge zero points, saturation, Clip bounds near the range's
// edges, Relu6 ranges that stop short of 6.
#pragma once

#include <string>
#include <vector>

#include "generators/gen_builder.h"
#include "generators/generator.h"
#include "ir/quant.h"

namespace fusefuzz::gen {

// A value holding integers, with the parameters of the op that produced it.
struct QValue {
  std::string name;
  QuantParams q;
};

// Quantization parameters for a float tensor with these values (gen_quant_params.cc).
struct QuantChoice {
  QuantType type = QuantType::kUint8;
  Op act = Op::Identity;  // the activation between the values and the Q (Identity: none)
};
QuantParams CalibrateQuant(Builder& b, const std::vector<double>& values, const QuantChoice& c);

// Moves a Conv's float W (and B) onto declared grids: W per channel or per tensor int8 (zero
// point 0, or sometimes not), B on int32 at float32(s_x * s_w[m]) (or a scale off by a factor, or
// with a zero point). `x` is the DequantizeLinear's params the conv reads.
void SnapConvToGrids(Builder& b, Node& conv, const QuantParams& x);

// The float values of `value` in the reference, for calibration.
std::vector<double> ReferenceValues(Builder& b, const std::string& value);

// The quantized generator's Generate (cfg.quant.enabled).
GeneratedCase GenerateQuantized(ChoiceSource& source, const GenConfig& cfg);

}  // namespace fusefuzz::gen
