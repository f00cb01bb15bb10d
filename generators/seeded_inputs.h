// Input tensors for a graph when the user gives only a seed.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace fusefuzz {

// Deterministic across compilers: the generator's own PRNG and value sampler, for every graph
// input in declaration order.
TensorMap InputsFromSeed(const Graph& g, uint64_t seed);

}  // namespace fusefuzz
