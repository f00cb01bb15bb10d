// The oneDNN peer of the fusion benchmark: the same pattern as one convolution primitive with
// post-ops ("fused": BN folded into the weights as fusefuzz's optimizer does, activations as
// eltwise post-ops, the residual as the sum post-op) or as separate primitives
// ("unfused": convolution, batch_normalization, eltwise, binary). Built only when oneDNN is
// found (FUSEFUZZ_HAVE_DNNL).
#pragma once

#include <memory>
#include <string>

#include "bench/fusion_patterns.h"
#include "bench/int8_cases.h"

namespace fusefuzz {

class DnnlPlan {
 public:
  virtual ~DnnlPlan() = default;
  virtual void Run() = 0;  // executes every primitive and waits for the stream
};

// Null when the pattern has no oneDNN equivalent in this oneDNN version (Pad, PRelu,
// HardSigmoid unfused), or when oneDNN is not built in.
std::unique_ptr<DnnlPlan> MakeDnnlPlan(const PatternCase& pc, bool fused);

// The int8 layer as one oneDNN u8s8 convolution (u8 dst, s32 bias, per-channel output scales)
// with the pattern's post-ops: the residual as the sum post-op (dst holds it, as the float
// plan does), ReLU / ReLU6 as eltwise relu / clip on the quantized value. Null without oneDNN.
std::unique_ptr<DnnlPlan> MakeDnnlInt8Plan(const QLayer& l, QPattern pattern);

// Limits oneDNN's OpenMP threads (no-op without oneDNN or OpenMP).
void SetDnnlThreads(int threads);

// "2.6.3", or "" without oneDNN.
std::string DnnlVersion();

}  // namespace fusefuzz
