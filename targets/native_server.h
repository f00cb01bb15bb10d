// The protocol loop of a target written in C++ (docs/target-protocol.md, "Writing a target in
// C++"): hello, then one request line -> one response line, with the request's graph verified,
// its tensors decoded and its options read, so that a runtime's adapter (targets/xnnpack/,
// targets/armnn/) is only its translation. A backend throws Unsupported for what its runtime
// cannot express and any other exception for a failure (an `error` answer); a runtime that
// aborts takes the process with it, which fusefuzz records as a crash with the stderr tail.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "optimizer/optimizer.h"
#include "targets/target.h"

namespace fusefuzz {

// "the runtime cannot express this": answered {"unsupported": what()}, not a finding.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure after the runtime applied (or was applying) rewrites: answered {"error": what(),
// "rewrites": [...]}, so that fusefuzz's blame can name the rule.
class FailureAfterRewrites : public std::runtime_error {
 public:
  FailureAfterRewrites(const std::string& what, std::vector<Rewrite> rw)
      : std::runtime_error(what), rewrites(std::move(rw)) {}
  std::vector<Rewrite> rewrites;
};

struct NativeRequest {
  Graph graph;
  ShapeMap shapes;  // every value's NCHW shape (VerifyGraph)
  TensorMap inputs;
  bool optimize = true;
  std::vector<std::string> pipeline, disable, only, inject;
  int64_t bisect_limit = -1;
  int threads = 1;
  int bench_warmup = 0, bench_runs = 0;  // bench_runs > 0: a timing request
};

struct NativeAnswer {
  TensorMap outputs;  // by graph output name, NCHW
  std::vector<Rewrite> rewrites;
  std::optional<BenchTimings> timings;  // required when the request had bench_runs > 0
};

using NativeBackend = std::function<NativeAnswer(const NativeRequest&)>;

// A pack's reproducer writer (request "repro", docs/target-protocol.md, "Reproducers"): the
// files of a standalone program that reproduces the case with the engine alone. Throws
// Unsupported for a case it cannot write.
using NativeReproWriter = std::function<Reproducer(const NativeRequest&, const ReproducerCase&)>;

// Writes `hello` (one line), then answers every request line of stdin until EOF. Returns the
// process exit status (0). A graph with an op of `crash_on` aborts the process after a line on
// stderr (the programs' --crash-on test switch: what a runtime's failed assert looks like).
// `repro`: answers requests with "repro" (declare the capability in the hello); null: refused.
int ServeNative(const nlohmann::json& hello, const NativeBackend& backend,
                const std::set<Op>& crash_on = {}, const NativeReproWriter& repro = nullptr);

// One request line -> one response line (no newline); what ServeNative does per line (tests).
std::string HandleNativeLine(const std::string& line, const NativeBackend& backend,
                             const std::set<Op>& crash_on = {},
                             const NativeReproWriter& repro = nullptr);

// --crash-on's argument: op names -> ops; throws InputError for an unknown name.
std::set<Op> OpsFromNames(const std::vector<std::string>& names);

// The rewrites a backend may apply under a request's disable / only / bisect_limit: whether the
// rewrite numbered `index` (from 1, in application order) of rule `rule` is allowed.
bool RewriteAllowed(const NativeRequest& r, const std::string& rule, int64_t index);

}  // namespace fusefuzz
