// How a fuzz target reports a finding: a message, then abort() through a call chain that is
// distinct per (kind, bucket), so that crash bucketing by stack (the sanitizer's DEDUP_TOKEN,
// ClusterFuzz's crash state: the top frames) files different bugs apart:
//   abort <- RuleBucket<bucket> <- Finding<Kind> <- AbortInBucket
// The bucket is the target's choice (fusion_fuzzer: the blamed rule's registry index; the engine
// targets: the blamed rule's index in the engine's rules, or the error class).
#pragma once

#include "harness/finding_kind.h"

namespace fusefuzz::fuzz {

inline constexpr int kFindingBuckets = 64;  // 0..62; 63: no or unknown rule

struct FindingText {
  const char* kind;
  const char* rule;
  const char* detail;
};

// Prints "fusefuzz finding: <kind> in <rule> [bucket N]" and the detail, then aborts. A bucket
// outside 0..63 is 63.
[[noreturn]] void AbortInBucket(FindingKind kind, int bucket, const FindingText& t);

}  // namespace fusefuzz::fuzz
