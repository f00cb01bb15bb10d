// The oneDNN peer of the fusion benchmark: the same pattern as one convolution primitive with
// post-ops ("fused": BN folded into the weights as fusefuzz's optimizer does, activations as
// eltwise post-ops, the residual as the sum post-op) or as separate primitives
// ("unfused": convolution, batch_normalization, eltwise, binary). Built only when oneDNN is
// found (FUSEFUZZ_HAVE_DNNL).
#pragma once

#include <memory>
#include <string>

#include "bench/fusion_patterns.h"

namespace fusefuzz {

class DnnlPlan {
 public:
  virtual ~DnnlPlan() = default;
  virtual void Run() = 0;  // executes every primitive and waits for the stream
};

// Null when the pattern has no oneDNN equivalent in this oneDNN version (Pad, PRelu,
// HardSigmoid unfused), or when oneDNN is not built in.
std::unique_ptr<DnnlPlan> MakeDnnlPlan(const PatternCase& pc, bool fused);

// Limits oneDNN's OpenMP threads (no-op without oneDNN or OpenMP).
void SetDnnlThreads(int threads);

// "2.6.3", or "" without oneDNN.
std::string DnnlVersion();

}  // namespace fusefuzz
