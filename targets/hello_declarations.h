// The hello's declarations about what the engine has and what it cannot run ("fusions",
// "constraints"; docs/target-protocol.md), parsed apart from the protocol client.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "targets/target.h"

namespace fusefuzz {

// Reads "fusions", "unreachable_fusions" and "constraints" of a hello into `caps` (both reset
// first). Returns "" or what is wrong, with its JSON path ("hello: /constraints/activation_types/0:
// ...").
std::string ParseHelloDeclarations(const nlohmann::json& hello, TargetCaps* caps);

// A whole hello line (docs/target-protocol.md) into `caps`: what the exec client reads from a
// program, and what an in-process engine (fuzz/engine_fuzzer.h) declares with the same words.
// Returns "" or what is wrong.
std::string ParseHello(const std::string& line, TargetCaps* caps);

// Its form in a hello (for the example target, tests and `list targets`); the defaults give {}.
nlohmann::json ConstraintsToJson(const TargetConstraints& c);

}  // namespace fusefuzz
