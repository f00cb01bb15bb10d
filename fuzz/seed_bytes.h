// Campaign graphs as fuzzer inputs: the bytes that make BytesSource draw exactly the choices a
// SeededSource drew for a seed, so that an engine target's seed corpus holds the graphs a
// `fusefuzz fuzz` campaign generates (fuzz/make_corpus.sh), and libFuzzer mutates from there.
#pragma once

#include <cstdint>
#include <vector>

#include "generators/generator.h"

namespace fusefuzz::fuzz {

// The case GenerateFromSeed(seed, cfg) and bytes that Generate(BytesSource(bytes), cfg) decodes
// to the same case (checked: throws std::logic_error when the graphs or inputs differ).
std::vector<uint8_t> BytesOfSeededCase(uint64_t seed, const GenConfig& cfg);

}  // namespace fusefuzz::fuzz
