// The protocol's "repro" request and answer (docs/target-protocol.md, "Reproducers"): the exec
// client's side. The request is a run request of the finding's failing run plus the finding;
// the answer's files are checked here (names, count, size) before anyone writes them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "targets/target.h"

namespace fusefuzz {

// Adds the finding to a run request (the object of RequestLine).
void AddReproducerCase(const ReproducerCase& c, nlohmann::json* request);

// The answer {"repro": {"files": [{"path", "text"}], "build": "..."}} or {"unsupported": why}
// or {"error": msg}; a malformed answer gives no files and a message saying what is wrong.
Reproducer ParseReproducerAnswer(const nlohmann::json& answer);

}  // namespace fusefuzz
