// The human-readable page of a finding (report.md).
#pragma once

#include <string>

#include "harness/repro.h"

namespace fusefuzz {

// The markdown report of a finding.
std::string FindingReport(const Repro& r);

// The graph right after the blamed rewrite, when fusefuzz can rebuild it (embedded target).
bool AfterGraph(const Repro& r, Graph* out);

}  // namespace fusefuzz
