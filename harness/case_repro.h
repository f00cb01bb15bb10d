// The part of a finding's reproducer that campaigns (campaign/campaign_worker.cc) and model checks
// (campaign/model_check.cc) build alike; each adds its own provenance, failing run and blame.
#pragma once

#include <string>

#include "harness/check.h"
#include "harness/repro.h"

namespace fusefuzz {

// A reproducer of a checked case: its graph and inputs and how it was checked (target, pipeline
// options without the rewrite callback, oracle, kernel check).
Repro ReproOfCheck(const Graph& g, const TensorMap& inputs, const std::string& target,
                   const CheckOptions& check);

// What the check said about the run that decides the finding: kind, verdict, worst element,
// detail (the oracle's, or the run's error message) and the target's log.
void SetOutcome(const CaseOutcome& out, Repro* r);

}  // namespace fusefuzz
