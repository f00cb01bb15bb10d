// The OpenCV pack's answer to request "repro" (docs/target-protocol.md, "Reproducers"): one C++
// file, reproduce_opencv.cc, with the case's ONNX model (the bytes the adapter imports) and
// inputs written in. It runs the model with OpenCV alone, fusion off and fusion on, prints both
// next to the reference and exits 1 while the fused value is outside the bound, 0 when it is
// not, 2 when OpenCV fails.
#pragma once

#include "targets/native_server.h"

namespace fusefuzz::opencv {

Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c, bool int8);

}  // namespace fusefuzz::opencv
