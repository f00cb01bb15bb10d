// opencv:int8 (targets/opencv/README.md, "opencv:int8"): the float graph quantized by OpenCV's
// own Net::quantize on the request's inputs, run with fusion off and with fusion on. fusefuzz's
// oracles judge a run against the fp64 reference of the float graph, which says nothing about
// an engine's own quantization (its scales are OpenCV's, not the graph's). So the int8 verdict
// is the pack's, on OpenCV's integer grid: the fused quantized net must give the unfused one's
// integers exactly. A difference is answered as an error of the optimized run naming the output,
// element and both integers, unless a fusion that changes rounding fired (BatchNormInt8 or
// ScaleInt8 folded into its producer: no bound derived for it), when the case is unsupported. The
// numbers fusefuzz judges are those of OpenCV's float net with fusion off (its float import,
// checked against the reference as in opencv:fp32).
#pragma once

#include <string>

#include "targets/native_server.h"

namespace fusefuzz::opencv {

NativeAnswer RunInt8(const NativeRequest& r, const std::string& onnx);

}  // namespace fusefuzz::opencv
