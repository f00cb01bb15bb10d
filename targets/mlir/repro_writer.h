// The standalone reproducer of fusefuzz-mlir-target (request "repro"): graph.mlir (the module
// the adapter ran), reproduce.sh (the two exact mlir-opt | mlir-runner command lines, fixed
// arguments only) and expected.txt (the failing element's reference and the oracle's bound).
#pragma once

#include <string>
#include <vector>

#include "targets/mlir/pipeline.h"
#include "targets/native_server.h"

namespace fusefuzz::mlir {

// `optimized`: the optional passes of the failing run (EnabledPasses of the request).
Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c,
                           const std::vector<std::string>& optimized, bool int8);

}  // namespace fusefuzz::mlir
