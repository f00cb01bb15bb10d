// The random graph generator: valid graphs by construction, biased toward the shapes of real
// fusion bugs (see docs/generator.md). Every decision comes from the ChoiceSource, so the same
// seed, the same fuzzer bytes or the same recorded trace give the same case on any compiler.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "generators/choice_source.h"
#include "generators/gen_config.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct GeneratedCase {
  Graph graph;
  TensorMap inputs;  // one tensor per graph input, float32-exact values
};

// Throws InputError when the config is invalid (ValidateConfig); otherwise always returns a
// graph that passes VerifyGraph with default Limits, with only cfg.allowed_ops, 1..max_outputs
// outputs and min_nodes..max_nodes nodes.
GeneratedCase Generate(ChoiceSource& source, const GenConfig& cfg);

// Input tensors for an existing graph (one per graph input, in declaration order), drawn with the
// generator's value sampler: zero-mean at cfg's scales, exact zeros and kink values.
TensorMap GenerateInputs(const Graph& g, ChoiceSource& source, const GenConfig& cfg = {});

// Convenience: Generate(SeededSource(seed), cfg).
GeneratedCase GenerateFromSeed(uint64_t seed, const GenConfig& cfg);

// Provenance record for reproducers: {"generator": "fusefuzz-gen", "version": .., "seed": ..,
// "config": ConfigToJson(cfg)}.
nlohmann::json GenerationProvenance(uint64_t seed, const GenConfig& cfg);

}  // namespace fusefuzz
