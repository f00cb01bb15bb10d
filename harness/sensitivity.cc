#include "harness/sensitivity.h"

#include <cmath>

#include "kernels/reference/reference.h"

namespace fusefuzz {
namespace {

// splitmix64: a small portable generator, so the perturbations are the same with any standard
// library.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::optional<SensitiveKernel> FindKernelSensitivity(Target& target, const Graph& g,
                                                     const TensorMap& inputs,
                                                     const CheckOptions& opts, uint64_t seed,
                                                     int trials) {
  for (int t = 1; t <= trials; ++t) {
    // Relative sizes 2^-24 .. 2^-22 (one to four ulps of float32), cycling over the trials.
    const double relative = std::ldexp(1.0, -24 + (t - 1) % 3);
    uint64_t state = seed ^ (0xA24BAED4963EE407ull * static_cast<uint64_t>(t));
    TensorMap perturbed = inputs;
    for (auto& [name, tensor] : perturbed) {
      for (float& x : tensor.data) {
        if (!std::isfinite(x) || x == 0.0f) continue;
        // d uniform in [-relative, relative].
        const double u = static_cast<double>(Next(state) >> 11) * 0x1.0p-53;
        x = static_cast<float>(static_cast<double>(x) * (1.0 + (2.0 * u - 1.0) * relative));
      }
    }
    RefTensorMap ref = RunReference(g, perturbed);
    CaseOutcome plain = RunAndJudge(target, g, perturbed, ref, opts, false, opts.opt);
    if (plain.kind == FindingKind::kKernel) {
      return SensitiveKernel{std::move(perturbed), std::move(plain), t, relative};
    }
  }
  return std::nullopt;
}

}  // namespace fusefuzz
