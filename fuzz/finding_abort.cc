#include "fuzz/finding_abort.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fusefuzz::fuzz {
namespace {

// Distinct bodies (N is printed) so that no identical-code folding can merge the buckets.
template <int N>
[[gnu::noinline]] void RuleBucket(const FindingText& t) {
  std::fprintf(stderr, "fusefuzz finding: %s in %s [bucket %d]\n  %s\n", t.kind, t.rule, N,
               t.detail);
  std::fflush(stderr);
  std::abort();
}

template <size_t... N>
constexpr std::array<void (*)(const FindingText&), sizeof...(N)> BucketTable(
    std::index_sequence<N...>) {
  return {&RuleBucket<static_cast<int>(N)>...};
}
constexpr auto kRuleBuckets = BucketTable(std::make_index_sequence<kFindingBuckets>());

// The empty asm after each call keeps it from being a tail call, so the kind's frame stays on
// the stack.
#define FF_KIND_FN(name)                                          \
  [[gnu::noinline]] void name(int bucket, const FindingText& t) { \
    kRuleBuckets[static_cast<size_t>(bucket)](t);                 \
    asm volatile("");                                             \
  }
FF_KIND_FN(FindingFusion)
FF_KIND_FN(FindingKernel)
FF_KIND_FN(FindingCrash)
FF_KIND_FN(FindingTimeout)
FF_KIND_FN(FindingTargetError)
FF_KIND_FN(FindingOther)
#undef FF_KIND_FN

}  // namespace

void AbortInBucket(FindingKind kind, int bucket, const FindingText& t) {
  if (bucket < 0 || bucket >= kFindingBuckets) bucket = kFindingBuckets - 1;
  using KindFn = void (*)(int, const FindingText&);
  KindFn fn = FindingOther;
  switch (kind) {
    case FindingKind::kFusion:
    case FindingKind::kUnquantized:
      fn = FindingFusion;
      break;
    case FindingKind::kKernel:
      fn = FindingKernel;
      break;
    case FindingKind::kCrash:
      fn = FindingCrash;
      break;
    case FindingKind::kTimeout:
      fn = FindingTimeout;
      break;
    case FindingKind::kTargetError:
      fn = FindingTargetError;
      break;
    case FindingKind::kNone:
      break;
  }
  fn(bucket, t);
  asm volatile("");
  std::abort();  // not reached: every bucket aborts
}

}  // namespace fusefuzz::fuzz
