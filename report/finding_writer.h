// Writes one finding folder: repro.json, report.md, before.dot / after.dot (blamed nodes
// highlighted) and their SVGs when Graphviz's `dot` is on the PATH (started directly, never
// through a shell). Every file is written atomically (temp + rename); a write error throws
// OutputError. `final_dir`: where the folder will live once complete (the campaign writes into
// a temporary folder and renames it), for the replay command in repro.json; default `dir`.
#pragma once

#include <string>

#include "harness/repro.h"
#include "report/target_answer.h"

namespace fusefuzz {

// `answer`: the target asked once more on the case (AskTarget), for report.md and the after
// picture of a target fusefuzz cannot rebuild the graph of; null: without.
void WriteFindingFolder(const std::string& dir, const Repro& r, const std::string& final_dir = "",
                        const TargetAnswer* answer = nullptr);

}  // namespace fusefuzz
