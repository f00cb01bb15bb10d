// Writes one finding folder: repro.json, report.md, before.dot / after.dot (blamed nodes
// highlighted) and their SVGs when Graphviz's `dot` is on the PATH. Every file is written
// atomically (temp + rename).
#pragma once

#include <string>

#include "harness/repro.h"

namespace fusefuzz {

void WriteFindingFolder(const std::string& dir, const Repro& r);

}  // namespace fusefuzz
