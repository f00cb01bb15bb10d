// libFuzzer target: bytes -> generated graph + inputs -> differential check of the embedded
// optimizer (faults from $FUSEFUZZ_INJECT). A finding aborts through a call chain that is
// distinct per (kind, blamed rule), so crash bucketing by stack (the sanitizer's DEDUP_TOKEN,
// ClusterFuzz's crash state) keeps different bugs apart (fuzz/finding_abort.h):
//   abort <- RuleBucket<registry index> <- Finding<Kind> <- AbortInBucket <- ReportFinding
// The fuzzer writes nothing itself; `fusion_fuzzer_replay --write-repro OUT CRASH` turns a crash
// input into a reproducer (docs/continuous-fuzzing.md).
#include <cstdint>
#include <string>

#include "fuzz/finding_abort.h"
#include "fuzz/fusion_case.h"

namespace fusefuzz::fuzz {
namespace {

[[gnu::noinline]] void ReportFinding(const FusionFinding& f) {
  // Registry indices 0..62 (rules in pipeline order, then faults); 63: none or unknown.
  int bucket = RegistryIndex(f.blame.rule);
  if (bucket < 0 || bucket >= kFindingBuckets - 1) bucket = kFindingBuckets - 1;
  const std::string k(FindingKindName(f.out.kind));
  std::string rule = f.blame.rule.empty() ? "(no rule blamed)" : f.blame.rule;
  std::string detail = f.out.run.status == RunStatus::kOk ? f.out.oracle.detail : f.out.run.message;
  AbortInBucket(f.out.kind, bucket, {k.c_str(), rule.c_str(), detail.c_str()});
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
