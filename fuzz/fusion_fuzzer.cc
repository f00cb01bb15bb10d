// libFuzzer target: bytes -> generated graph + inputs -> differential check of the embedded
// optimizer (faults from $FUSEFUZZ_INJECT). A finding aborts through a call chain that is
// distinct per (kind, blamed rule), so crash bucketing by stack (the sanitizer's DEDUP_TOKEN,
// ClusterFuzz's crash state) keeps different bugs apart:
//   abort <- RuleBucket<registry index> <- Finding<Kind> <- ReportFinding
// The fuzzer writes nothing itself; `fusion_fuzzer_replay --write-repro OUT CRASH` turns a crash
// input into a reproducer (docs/continuous-fuzzing.md).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "fuzz/fusion_case.h"

namespace fusefuzz::fuzz {
namespace {

constexpr int kBuckets = 64;  // registry indices 0..62; 63 = no or unknown rule

struct FindingText {
  const char* kind;
  const char* rule;
  const char* detail;
};

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
constexpr auto kRuleBuckets = BucketTable(std::make_index_sequence<kBuckets>());

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

[[gnu::noinline]] void ReportFinding(const FusionFinding& f) {
  int bucket = RegistryIndex(f.blame.rule);
  if (bucket < 0 || bucket >= kBuckets - 1) bucket = kBuckets - 1;
  const std::string k(FindingKindName(f.out.kind));
  std::string rule = f.blame.rule.empty() ? "(no rule blamed)" : f.blame.rule;
  std::string detail = f.out.run.status == RunStatus::kOk ? f.out.oracle.detail : f.out.run.message;
  FindingText t{k.c_str(), rule.c_str(), detail.c_str()};
  using KindFn = void (*)(int, const FindingText&);
  KindFn fn = FindingOther;
  switch (f.out.kind) {
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
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One target for the process: fuzz targets are entered through a C function, so the runner
  // is a function-local static (built on first use, faults checked once).
  static fusefuzz::fuzz::FusionCaseRunner runner;
  if (auto f = runner.Run(data, size)) fusefuzz::fuzz::ReportFinding(*f);
  return 0;
}
