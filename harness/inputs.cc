#include "harness/inputs.h"

#include "generators/gen_builder.h"

namespace fusefuzz {

TensorMap InputsFromSeed(const Graph& g, uint64_t seed) {
  SeededSource src(seed);
  GenConfig cfg;
  gen::Builder b(src, cfg);
  TensorMap out;
  for (const auto& in : g.inputs) out[in.name] = b.InputTensor(in.shape, gen::InputKind::kGeneral);
  return out;
}

}  // namespace fusefuzz
