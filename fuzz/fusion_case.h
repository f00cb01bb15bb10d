// The fusion fuzzer's case: fuzzer bytes -> BytesSource -> Generate -> reference -> CheckCase on
// the embedded target (with the injected faults), and on a finding its blame and reproducer.
// Shared by the libFuzzer target (which aborts on a finding) and its replay tool (which writes
// the reproducer), so both see exactly the same case for the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "generators/generator.h"
#include "harness/blame.h"
#include "harness/check.h"
#include "harness/repro.h"

namespace fusefuzz::fuzz {

// Faults to inject: $FUSEFUZZ_INJECT (comma list) if set, else the FUSEFUZZ_FUZZ_INJECT compile
// definition, else none.
std::vector<std::string> InjectedFaults();

// The generator config of the fuzzer: the defaults restricted to the target's ops. The default
// limits (<= 12 nodes, <= 16 channels, 16x16 spatial) keep one case at a few milliseconds.
GenConfig FuzzGenConfig(const Target& target);

struct FusionFinding {
  GeneratedCase c;
  RefTensorMap ref;
  CaseOutcome out;
  Blame blame;  // for fusion findings
};

class FusionCaseRunner {
 public:
  // Throws InputError for unknown fault names.
  FusionCaseRunner();
  // The finding of these bytes, if any. Exceptions of the code under test propagate (to the
  // fuzzer that is a crash, as it should be).
  std::optional<FusionFinding> Run(const uint8_t* data, size_t size, bool blame = true);
  // The reproducer of a finding; provenance names the fuzzer input (SHA-1 and size).
  Repro MakeRepro(const FusionFinding& f, const uint8_t* data, size_t size,
                  const std::string& input_name) const;
  const CheckOptions& options() const { return opts_; }

 private:
  std::unique_ptr<Target> target_;
  GenConfig gen_;
  CheckOptions opts_;
};

// Index of a rule or fault in the registry (rules in pipeline order, then faults), or -1.
int RegistryIndex(const std::string& rule);

}  // namespace fusefuzz::fuzz
