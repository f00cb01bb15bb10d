// The embedding API (docs/continuous-fuzzing.md, "Fuzzing your engine in-process"): a team
// implements FuzzEngine for its engine in C++ and gets a libFuzzer target that checks the engine's
// fusions numerically, in-process, as a fusefuzz campaign would:
//   fuzzer bytes -> BytesSource -> Generate (fusion_fuzzer's decoding; float, or the quantized
//   generator) restricted to the engine's ops and constraints -> reference -> the engine
//   unoptimized and optimized -> the oracle (CheckCase) -> on a finding: blame, the reproducer
//   JSON written, and an abort at a site distinct per signature class (finding_abort.h).
// Findings whose signature is in the known-signature list (the engine's upstream bugs) are
// counted and passed over, so that a run does not end at the first known bug.
//
//   class MyEngine : public fusefuzz::fuzz::FuzzEngine { ... };
//   FUSEFUZZ_ENGINE_FUZZER([] { return std::make_unique<MyEngine>(); }, {.quant = false})
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "campaign/known_signatures.h"
#include "generators/generator.h"
#include "harness/check.h"
#include "harness/repro.h"
#include "targets/native_server.h"

namespace fusefuzz::fuzz {

// What a team implements. Requests and answers are those of a C++ protocol target
// (targets/native_server.h): the graph verified (NCHW shapes of every value), its inputs, and
// the pipeline options; an engine that serves the protocol already has this function.
class FuzzEngine {
 public:
  virtual ~FuzzEngine() = default;
  // The engine's hello (docs/target-protocol.md): "name" is the target spec its reproducers
  // replay on (`fusefuzz replay` runs that spec), "ops" restrict the generator, "precision",
  // "quantize_rounding" and "constraints" are the oracle's and generator's, "rules" the names
  // its rewrites report, "capabilities" "rewrites"/"disable"/"bisect_limit" enable blame.
  virtual nlohmann::json Hello() const = 0;
  // One run: r.optimize true is the engine's optimized run, false its unoptimized one (the
  // kernel check). Throw Unsupported for what the engine cannot express (not a finding),
  // FailureAfterRewrites or any other exception for a failure (a target_error finding). An
  // abort or a sanitizer report is a crash of the fuzz target, as it should be.
  virtual NativeAnswer Run(const NativeRequest& r) = 0;
};

// The engine as a fusefuzz Target (what CheckCase, blame and minimization run): failures are
// statuses worded as the exec client words them, so signatures equal a campaign's.
std::unique_ptr<Target> MakeInProcessTarget(std::unique_ptr<FuzzEngine> engine);

struct EngineFuzzerOptions {
  bool quant = false;     // the quantized generator (`fusefuzz fuzz --quant`)
  int64_t max_nodes = 8;  // of a generated graph (the generator's limits.max_nodes)
  // The known-signature file (campaign --known format: one signature per line, '#' comments):
  // $FUSEFUZZ_KNOWN when set ("" or "none": no list), else this path when it exists. A relative
  // path is looked up beside the fuzz target's binary.
  std::string known_file;
};

struct EngineFinding {
  GeneratedCase c;
  RefTensorMap ref;
  CaseOutcome out;
  Repro repro;  // blamed, not minimized
  std::string signature;
  bool known = false;
};

class EngineFuzzer {
 public:
  // Throws InputError for a bad hello or known-signature file.
  EngineFuzzer(std::unique_ptr<FuzzEngine> engine, const EngineFuzzerOptions& o);
  // The finding of these bytes, if any (known ones too, flagged).
  std::optional<EngineFinding> Run(const uint8_t* data, size_t size,
                                   const std::string& input_name = "libFuzzer input");
  // LLVMFuzzerTestOneInput: Run; a known finding is counted and passed over; a new one writes
  // its reproducer ($FUSEFUZZ_REPRO_DIR, default the working folder:
  // <signature>.<input sha1>.repro.json) and aborts in its bucket.
  int TestOneInput(const uint8_t* data, size_t size);
  // Tool modes of the target's _replay binary (fuzz/standalone_main.cc), as fusion_fuzzer_replay:
  // --write-repro OUT CRASHFILE (prints "signature SIG"; what fuzz/triage_crashes.sh runs) and
  // --find [--random N ...] FILE|DIR; --stats [--random N ...] FILE|DIR (verdicts, fusions fired,
  // findings by signature; exit 1 when one is not known); and --seed-corpus DIR N [SEED]: N inputs
  // that decode to the graphs a campaign with --seed SEED (default 1) draws as its cases 0..N-1
  // with this fuzzer's generator settings (seed_bytes.h), named by SHA-1. Returns -1 for any other
  // argv.
  int Tool(int argc, char** argv);

  const TargetCaps& caps() const { return target_->caps(); }
  const GenConfig& gen() const { return gen_; }
  const KnownSignatures& known() const { return known_; }

 private:
  std::unique_ptr<Target> target_;
  GenConfig gen_;
  CheckOptions check_;
  KnownSignatures known_;
  std::string known_source_;
  std::vector<std::string> known_seen_;  // known signatures met so far (printed once each)
};

// The bucket of a finding (finding_abort.h): the blamed rule's index in the engine's rules (its
// name hashed when the hello lists no such rule) for a mismatch, the error class (hashed) for a
// target error, crash or timeout; 63 for an unblamed mismatch.
int EngineBucket(const TargetCaps& caps, const Repro& r);

// The fuzzer of the macro below: a bad hello or known-signature file is printed and exits 2
// (libFuzzer would otherwise report it as a crash of the first input).
EngineFuzzer& MakeEngineFuzzerOrExit(const std::function<std::unique_ptr<FuzzEngine>()>& make,
                                     const EngineFuzzerOptions& o);

}  // namespace fusefuzz::fuzz

// Defines the fuzz target's entry points for an engine: `make_engine` () -> unique_ptr<FuzzEngine>,
// `options` an EngineFuzzerOptions. The fuzzer is built on first use and lives for the process.
#define FUSEFUZZ_ENGINE_FUZZER(make_engine, ...)                                          \
  static fusefuzz::fuzz::EngineFuzzer& FusefuzzEngineFuzzer() {                           \
    static fusefuzz::fuzz::EngineFuzzer& fuzzer = fusefuzz::fuzz::MakeEngineFuzzerOrExit( \
        make_engine, fusefuzz::fuzz::EngineFuzzerOptions __VA_ARGS__);                    \
    return fuzzer;                                                                        \
  }                                                                                       \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {               \
    return FusefuzzEngineFuzzer().TestOneInput(data, size);                               \
  }                                                                                       \
  extern "C" int FusefuzzFuzzerTool(int argc, char** argv) {                              \
    return FusefuzzEngineFuzzer().Tool(argc, argv);                                       \
  }
