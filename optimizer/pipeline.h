// Pipeline construction from OptimizeOptions (see optimizer/optimizer.h):
// 1. stages = `pipeline` (rule names) or, when empty, every rule in default order;
// 2. each injected fault is inserted just before the first stage named by its FaultEntry::before,
//    or appended when that rule is not in the pipeline;
// 3. `disable` removes stages by name (rules or faults), then `only`, when non-empty, keeps just
//    the stages it names (rules or faults).
// Unknown names anywhere throw InputError("optimizer options: <field>[i]", ...) listing the known
// rules and faults.
#pragma once

#include <string>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rule.h"

namespace fusefuzz {

std::vector<const Rule*> BuildPipeline(const OptimizeOptions& opts);

// The driver over explicit stages (Optimize = RunPipeline(g, BuildPipeline(opts), opts)); the
// name lists of `opts` are ignored here. For tests of the driver with rules of their own.
OptimizeResult RunPipeline(const Graph& g, const std::vector<const Rule*>& stages,
                           const OptimizeOptions& opts);

// "rules: a, b, ...; faults: x, y" for error messages and `--help` texts.
std::string KnownNamesText();

}  // namespace fusefuzz
