// Kernel sensitivity: is a fusion finding really the fusion's, or a kernel that fails on inputs
// within rounding of the case's? A legitimate fusion perturbs what the downstream kernels read by
// a rounding error (folded weights, a fused bias add); a fragile kernel (a norm computing its
// variance as E[x^2] - E[x]^2) can turn that into a mismatch, which is the kernel's defect, not
// the fusion's. See docs/campaign.md ("Kernel sensitivity").
#pragma once

#include <cstdint>
#include <optional>

#include "harness/check.h"

namespace fusefuzz {

struct SensitiveKernel {
  TensorMap inputs;     // the perturbed inputs on which the unoptimized run fails
  CaseOutcome outcome;  // that unoptimized run (a kernel MISMATCH)
  int trial = 0;        // which perturbation (1-based)
  double relative = 0;  // its relative size
};

// Reruns the UNOPTIMIZED target on `trials` copies of `inputs`, each element scaled by
// (1 + d) with |d| <= 2^-22 (a few float32 ulps), against the reference of those same inputs.
// Returns the first perturbation whose unoptimized run is a kernel MISMATCH, or nullopt.
// Deterministic in `seed`.
std::optional<SensitiveKernel> FindKernelSensitivity(Target& target, const Graph& g,
                                                     const TensorMap& inputs,
                                                     const CheckOptions& opts, uint64_t seed,
                                                     int trials = 8);

}  // namespace fusefuzz
