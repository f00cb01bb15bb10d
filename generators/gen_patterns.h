// Internal to the generator: the pattern families of patterns.def (except "repeat", which needs
// the generator's history and lives in generator.cc).
#pragma once

#include <string>

#include "generators/gen_builder.h"

namespace fusefuzz::gen {

// Whether every op the pattern needs is allowed.
bool PatternEligible(Builder& b, Pattern p);
// Emits one instance on `x` using at most `budget` nodes (budget >= PatternMinBudget(p)); returns
// the instance's main output value.
std::string EmitPattern(Builder& b, Pattern p, const std::string& x, int64_t budget);

// gen_decomposed.cc: the decomposed normalizations and activations (the patterns after "repeat"
// in patterns.def).
bool DecomposedEligible(Builder& b, Pattern p);
std::string EmitDecomposed(Builder& b, Pattern p, const std::string& x, int64_t budget);

}  // namespace fusefuzz::gen
