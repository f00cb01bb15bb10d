// The XNNPACK pack's answer to request "repro" (docs/target-protocol.md, "Reproducers"): one C++
// file, reproduce_xnnpack.cc, that defines the subgraph the adapter defined for the case (the
// calls recorded as they were made: xnn_recorder.h), with the weights, constants and inputs
// written in, runs it with XNNPACK alone and compares the failing output's worst element with
// the reference (exit 1 while the finding is there, 0 when fixed, 2 when XNNPACK fails).
#pragma once

#include "targets/native_server.h"

namespace fusefuzz::xnnpack {

// Runs `run` (the adapter's Run) on the case while recording, then writes the program.
Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c, bool int8,
                           const NativeBackend& run);

}  // namespace fusefuzz::xnnpack
