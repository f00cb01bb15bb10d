// A request's NCHW graph as a TOSA module in MLIR 22's textual form (targets/mlir/README.md).
// Values stay NCHW; the ops TOSA defines only on NHWC (conv2d, depthwise_conv2d, the pools) get
// an explicit tosa.transpose on each side. `@graph` takes the graph inputs as arguments and holds
// the weights as tosa.const; `@main` embeds the inputs as constants, calls `@graph` and prints
// each output's float32 bit patterns as i32 (printMemrefI32): exact, NaN payloads included.
// Used only by fusefuzz-mlir-target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "targets/native_server.h"

namespace fusefuzz::mlir {

// The module text for `r` (its graph, shapes and inputs). Throws Unsupported naming the node for
// what has no faithful TOSA translation. `int8`: mlir:int8 (QuantizeLinear, DequantizeLinear).
std::string WriteTosaModule(const NativeRequest& r, bool int8);

// The outputs printed by the module's @main (stdout of mlir-runner), in graph output order,
// decoded from their i32 bit patterns into NCHW tensors of `r`'s shapes. Throws
// std::runtime_error when the text does not hold them all.
TensorMap ParsePrintedOutputs(const NativeRequest& r, const std::string& printed);

}  // namespace fusefuzz::mlir
