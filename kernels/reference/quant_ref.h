// Internal to the reference: the quantized ops (kernels/reference/quant.cc, qlinear_conv.cc) and
// the helpers that carry an integer tensor's admitted spread into the float values computed from
// it (docs/oracle.md, "The integer-grid oracle").
#pragma once

#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {

// quant.cc: Q, DQ, QLinearAdd; `rounding` is the judged target's declared QuantizeLinear rule.
RefTensor RunQuant(const Node& n, const Inputs& in, QuantizeRounding rounding);
RefTensor RunQLinearConv(const Node& n, const Inputs& in);  // qlinear_conv.cc

// How far, in steps, a correct engine's integer may lie from the reference's integer at element
// i of an integer-valued tensor: from its admitted range when it has grid facts, else from the
// deviation its magnitude and sigma carry. 0 for given integers.
double IntegerSpread(const RefTensor& x, size_t i);
// The same from the sigma machinery's half-width grid_es (docs/oracle.md, "Carried spread in
// quadrature"); <= IntegerSpread.
double IntegerSpreadSigma(const RefTensor& x, size_t i);
// The admitted deviation of a float value: its one-rounding bound u*m (which holds every
// carried spread, AddDeviation) or kSigmaProbe sigmas of its float32 evaluation, the larger.
double FloatDeviation(const RefTensor& x, size_t i);
// Adds a legitimate deviation `dev` (value units) to element i: into the magnitude as dev/u, so
// the bound oracle and the next quantization see it once, and to sigma as dev/kSigmaProbe.
void AddDeviation(RefTensor* y, size_t i, double dev);
// The same with a carried integer spread, whose L1 reach `dev` goes into the magnitude and whose
// quadrature reach `dev_sigma` (<= dev) into sigma.
void AddDeviation(RefTensor* y, size_t i, double dev, double dev_sigma);
// Magnitude and sigma of an integer-valued tensor from its grid facts.
void SetGridMagnitudes(RefTensor* y);
// Input `input` of a quantized op must hold integers of `type` (exact floats).
void CheckIntegers(const Node& n, size_t input, const RefTensor& x, QuantType type);
// A Conv/FusedConv with a weight grid and a bias, fed by a per-tensor DequantizeLinear: admits
// the bias' distance to the int32 grid s_x * s_w per channel (the engine may round it there).
void AdmitBiasRounding(const Node& n, const RefTensor& x, RefTensor* y);

}  // namespace fusefuzz::ref
