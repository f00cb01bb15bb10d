// What the report writers (finding_report.cc, target_answer.cc) share: how numbers are printed
// and when a graph is too large to rerun for a report.
#pragma once

#include <cstdint>
#include <string>

namespace fusefuzz {

// Above this many values in the whole graph the reference is not rerun for the report.
inline constexpr int64_t kMaxElementsRun = 1 << 22;

// `v` with `significant` digits (%g): 9 keep a float32 exact, fewer for tables.
std::string NumberText(double v, int significant = 9);

}  // namespace fusefuzz
