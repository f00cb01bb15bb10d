#include "generators/seeded_inputs.h"

#include "generators/generator.h"

namespace fusefuzz {

TensorMap InputsFromSeed(const Graph& g, uint64_t seed) {
  SeededSource src(seed);
  return GenerateInputs(g, src);
}

}  // namespace fusefuzz
