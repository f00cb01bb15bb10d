// The rule names a target accepts in the options pipeline/disable/only, checked before any case
// runs: a name the target does not know would otherwise be ignored by it silently
// (`--disable PadFusion` where ONNX Runtime says `Pad_Fusion`), and every "confirmation" with
// the rule disabled would confirm nothing.
#pragma once

#include <string>
#include <vector>

#include "optimizer/optimizer.h"
#include "targets/target.h"

namespace fusefuzz {

// A rule or node name a target reports, or a reproducer names for an engine: at most this many
// bytes and no control character (HasControlCharacter). Such names go into report commands
// (--disable NAME) and every finding's files: a NUL would cut `--disable a\0b` to `--disable a`,
// a newline forge a report line.
inline constexpr size_t kMaxReportedName = 256;
bool HasControlCharacter(const std::string& s);

// The names `caps` accepts: its hello's "rules" when it declared them, else (capability
// `disable`) fusefuzz's rules and faults, which is what the protocol's `disable` promises.
// Empty for a target without `disable`.
std::vector<std::string> AcceptedRuleNames(const TargetCaps& caps);

// The fusions `caps` declares, for engine coverage (report/engine_coverage.h): its hello's
// "fusions", else its "rules", else (capability `disable`) fusefuzz's rules without the faults.
std::vector<std::string> DeclaredFusions(const TargetCaps& caps);

// Throws InputError (exit status 2) for a pipeline/disable/only name the target does not know,
// with its names and the closest one ("did you mean"), or when the target lacks `disable`.
// `what` names the option the names came from ("--disable").
void CheckRuleNames(const TargetCaps& caps, const OptimizeOptions& opt,
                    const std::string& what = "--disable/--only/--pipeline");

}  // namespace fusefuzz
