// A target is what fusefuzz tests: something that takes a graph and inputs, optionally optimizes
// the graph, runs it and returns its outputs (and, if it can, the rewrites it applied).
//   embedded   the project's optimizer + fast kernels (default)
//   exec:CMD   an external program speaking line-delimited JSON (docs/target-protocol.md)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/precision.h"
#include "ir/quantize_rounding.h"
#include "optimizer/optimizer.h"

namespace fusefuzz {

enum class RunStatus { kOk, kUnsupported, kError, kCrash, kTimeout };
std::string_view RunStatusName(RunStatus s);

// How a quantized target ran one graph node (response "node_forms", docs/target-protocol.md).
enum class NodeForm {
  kQuantized,  // an int8 kernel, or an op run on the int8 tensor as it is (ReLU, max pooling)
  kReference,  // a reference module: dequantize, the float op, quantize
  kFloat,      // in float
  kSimulated,  // the graph's quantization simulated in float (the unoptimized run)
};
// "quantized", "reference", "float", "simulated".
std::string_view NodeFormName(NodeForm f);
std::optional<NodeForm> ParseNodeForm(std::string_view name);

struct TargetCaps {
  std::string name;
  std::set<Op> ops;           // ops the target accepts; the generator restricts itself to them
  bool bisect_limit = false;  // honours OptimizeOptions::bisect_limit
  bool disable = false;       // honours OptimizeOptions::disable
  bool inject = false;        // knows fusefuzz's fault names
  bool reports_rewrites = false;
  bool onnx = false;       // wants each graph also as an ONNX model (onnx/export.h) in the request
  bool onnx_only = false;  // wants the graph only as ONNX: requests carry no graph JSON
  bool bench = false;      // times repeated runs itself (RunRequest::bench_runs)
  std::string engine;  // optional hello "engine": the engine and its version, e.g. "torch 1.13.0"
  // optional hello "precision": the arithmetic of its runs; the oracle holds them to its u.
  Precision precision = Precision::kFloat32;
  // optional hello "quantize_rounding": how its QuantizeLinear rounds; the reference admits
  // exactly what that rule can give (docs/oracle.md, "Declared quantize rounding").
  QuantizeRounding quantize_rounding = QuantizeRounding::kHalfEven;
  // Optional hello "rules": the names the target accepts in pipeline/disable/only (its own, as
  // its rewrites report them). Empty: fusefuzz's catalogue when `disable` (targets/rule_names.h).
  std::vector<std::string> rules;
  // Optional hello "spellings": the spellings (ir/spellings.def) it writes when a node carries
  // one. A target fed ONNX only also gets fusefuzz's ONNX export spellings (TargetSpellings).
  std::set<std::string> spellings;
};

// The spellings the generator may use for a target: those it declares, and the ONNX export's
// when it reads ONNX only (fusefuzz writes those itself).
std::set<std::string> TargetSpellings(const TargetCaps& caps);

struct RunRequest {
  bool optimize = true;  // false: run the graph as given (kernel check)
  OptimizeOptions opt;   // on_rewrite is ignored by external targets
  int threads = 1;
  // > 0: a timing request (capability bench): prepare the case once, run it bench_warmup times
  // untimed, then bench_runs times timed, and report the timings of those runs.
  int bench_warmup = 0;
  int bench_runs = 0;
};

// Timings a target measured itself (transport excluded), in nanoseconds.
struct BenchTimings {
  int64_t runs = 0;
  double median_ns = 0, min_ns = 0;
};

// Runs `run` `warmup` times, then `runs` times, each timed on the steady clock.
BenchTimings TimeRuns(int warmup, int runs, const std::function<void()>& run);

struct TargetResult {
  RunStatus status = RunStatus::kOk;
  std::string message;  // why, for anything but kOk
  TensorMap outputs;
  std::vector<Rewrite> rewrites;        // when the target reports them
  std::string log;                      // stderr tail of an external target after a crash
  std::optional<BenchTimings> timings;  // answers a timing request (validated)
  // Quantized targets: how each graph node ran, and the nodes the backend's own configuration
  // declares a quantized form for (response "node_forms", "backend_quantizes"). A promised node
  // in float or reference form after the optimized run is a finding of kind `unquantized`.
  std::map<std::string, NodeForm> node_forms;
  std::vector<std::string> backend_quantizes;
  // The target broke the protocol (garbage, or a well-formed response with bad content such as
  // invalid timings), as opposed to reporting an error of its own.
  bool bad_response = false;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const TargetCaps& caps() const = 0;
  // Never throws for target failures: they are statuses. Throws InputError only for fusefuzz's
  // own bad input (e.g. unknown rule names).
  virtual TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) = 0;
  // "embedded" or "exec:CMD": the spec that recreates this target (for reproducers).
  virtual std::string spec() const = 0;
};

struct TargetSettings {
  double timeout_seconds = 10;  // per case, external targets
};

// Throws InputError for an unknown spec or an external program that cannot start or sends a
// bad hello.
std::unique_ptr<Target> MakeTarget(const std::string& spec, const TargetSettings& settings = {});

std::unique_ptr<Target> MakeEmbeddedTarget();
std::unique_ptr<Target> MakeExecTarget(const std::string& command, const TargetSettings& settings);

}  // namespace fusefuzz
