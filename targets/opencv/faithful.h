// What the OpenCV pack refuses before OpenCV sees it (targets/opencv/README.md, "Refused"): the
// constructs OpenCV 4.6's ONNX import runs with other semantics than ONNX's, each found by the
// pack's own op-family tests (opencv_target_test.cc). A refusal is `unsupported` naming the node,
// so that a known importer deviation is not filed again and again as a kernel finding; the
// deviations themselves are in docs/upstream-bugs.md.
#pragma once

#include "targets/native_server.h"

namespace fusefuzz::opencv {

// Throws Unsupported for the first node OpenCV would run unfaithfully.
void RefuseUnfaithful(const NativeRequest& r);

}  // namespace fusefuzz::opencv
