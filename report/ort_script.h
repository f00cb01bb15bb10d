// A standalone reproducer of an ONNX Runtime finding (issue 28 item 4): `reproduce.js` next to
// model.onnx, run with Node and onnxruntime-node alone, no fusefuzz. docs/campaign.md, "Output".
#pragma once

#include <string>

#include "harness/repro.h"

namespace fusefuzz {

// The script for a finding on `onnxruntime:LEVEL`, or "" when the finding is not on ONNX
// Runtime, is not a mismatch with a worst element, or its inputs and failing output are too
// large to write into a script (more than `max_elements` values).
std::string OrtReproScript(const Repro& r, int64_t max_elements = 4096);

}  // namespace fusefuzz
