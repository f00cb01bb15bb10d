// A target is what fusefuzz tests: something that takes a graph and inputs, optionally optimizes
// the graph, runs it and returns its outputs (and, if it can, the rewrites it applied). Which one
// is a TargetSpec (targets/target_spec.h), parsed once:
//   embedded        the project's optimizer + fast kernels (default)
//   ENGINE[:MODE]   a built-in engine pack, targets/ENGINE/ (pytorch, onnxruntime, xnnpack, armnn)
//   exec:CMD        an external program speaking line-delimited JSON (docs/target-protocol.md)
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
#include "targets/target_spec.h"

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

// Optional hello "constraints" (docs/target-protocol.md): what the target cannot run, so that
// the generator never builds it (campaign/campaign_constraints.cc). Defaults: no constraint.
struct TargetConstraints {
  // Storage types of quantized activations it takes ("int8", "uint8"); empty: both.
  std::vector<std::string> activation_types;
  bool per_axis_activations = true;  // a per-channel QuantizeLinear on an activation
  // A quantized value read by more than one consumer (a DQ fanning out, a Q read twice): engines
  // whose flows attach one observer per value refuse what would need two.
  bool shared_quantized_values = true;
  bool quantized_graph_outputs = true;  // a quantized intermediate also a graph output
  // A float value read by an activation and by another user (an Add's sum quantized before its
  // Relu too): the activation cannot be fused into its producer.
  bool fan_out_before_activation = true;
  bool negative_scales = true;  // a quantization scale below 0
  // A quantized value requantized with other parameters (DQ -> Q with new ones, a MaxPool whose
  // Q has its own): flows that run such ops on the integers with one observer refuse it.
  bool requantize = true;
  bool weight_zero_points = true;  // a weight grid with a zero point (weights not symmetric)
  // A Pad in a quantized conv block: on the integers before its DQ, or in float after it.
  bool integer_pads = true;
  bool operator==(const TargetConstraints&) const = default;
};

// Cases per call a target with the capability batch gets unless its hello says how many, and the
// most it may ask for (docs/target-protocol.md, "Batches").
inline constexpr int kDefaultBatchCases = 8;
inline constexpr int kMaxBatchCases = 256;

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
  bool repro = false;      // writes standalone reproducers (request "repro", AskReproducer)
  // Capability batch (docs/target-protocol.md, "Batches"): takes one graph that joins several
  // cases. batch_cases: how many it suggests per call (hello "batch" {"cases"}); 0 = no batches.
  // batch_max_nodes: the most nodes of a joined graph (hello "batch" {"max_nodes"}); 0 = no limit.
  int batch_cases = 0;
  int batch_max_nodes = 0;
  std::string engine;  // optional hello "engine": the engine and its version, e.g. "torch 1.13.0"
  // optional hello "precision": the arithmetic of its runs; the oracle holds them to its u.
  Precision precision = Precision::kFloat32;
  // optional hello "quantize_rounding": how its QuantizeLinear rounds; the reference admits
  // exactly what that rule can give (docs/oracle.md, "Declared quantize rounding").
  QuantizeRounding quantize_rounding = QuantizeRounding::kHalfEven;
  // Optional hello "rules": the names the target accepts in pipeline/disable/only (its own, as
  // its rewrites report them). Empty: fusefuzz's catalogue when `disable` (targets/rule_names.h).
  std::vector<std::string> rules;
  // Optional hello "fusions": the engine's fusions, named as its rewrites report them; a
  // campaign reports which fired and which never did. Empty: `rules` (report/engine_coverage.h).
  std::vector<std::string> fusions;
  // Optional hello "unreachable_fusions": declared fusions that cannot fire on this target
  // whatever the graph (ONNX Runtime's CUDA-only or training-only ones), and why.
  std::map<std::string, std::string> unreachable_fusions;
  // Optional hello "limits": what this engine build cannot do, name -> why (an older ONNX
  // Runtime release, docs/onnx.md "Testing another release"). Shown by `list targets` and in
  // finding reports. "unoptimized_run": its unoptimized run is optimized too, so the kernel check
  // is skipped and the optimized run is judged against the reference alone (harness/check.cc);
  // "disable": why it cannot disable rules, said instead of "Blame unavailable".
  std::map<std::string, std::string> limits;
  TargetConstraints constraints;
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
  // How many cases the graph joins (a batch, harness/batch.h): the target's timeout scales with it.
  int cases = 1;
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

// A finding as a pack's reproducer writer needs it (request "repro", docs/target-protocol.md):
// the failing output's worst element and the reference there, and every output's reference.
struct ReproducerCase {
  std::string title;   // one line: kind, blamed rule
  std::string output;  // the failing output; "" for a finding that is not a wrong number
  int64_t index = -1;  // its worst element (flat NCHW index)
  double reference = 0;
  double bound = 0;    // the oracle's bound on |candidate - reference| there
  std::string oracle;  // the oracle's name ("bound", "ulp", ...), for the reproducer's head
  TensorMap expected;  // every output's reference, rounded to float32
};

// A file of a standalone reproducer, written into the finding folder (never run by fusefuzz).
struct ReproducerFile {
  std::string path;  // a plain file name (checked: ValidReproducerFileName)
  std::string text;
};

struct Reproducer {
  std::vector<ReproducerFile> files;  // empty: none (message says why)
  std::string build;                  // the command that builds or runs it, for report.md
  std::string message;
};

// A file name a reproducer may use: letters, digits, '_', '-', '.', not starting with '.', at
// most 64 characters, and none of the names fusefuzz writes itself.
bool ValidReproducerFileName(const std::string& name);
inline constexpr size_t kMaxReproducerFiles = 8;
inline constexpr size_t kMaxReproducerBytes = size_t{16} << 20;  // all files together

class Target {
 public:
  virtual ~Target() = default;
  virtual const TargetCaps& caps() const = 0;
  // Never throws for target failures: they are statuses. Throws InputError only for fusefuzz's
  // own bad input (e.g. unknown rule names).
  virtual TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) = 0;
  // The spec's text that recreates this target (for reproducers): "embedded", "pytorch:fx",
  // "exec:CMD".
  virtual std::string spec() const = 0;
  // A standalone reproducer of the case written by the target itself (capability repro);
  // never throws for the target's failures: no files and a message instead.
  virtual Reproducer AskReproducer(const Graph& g, const TensorMap& inputs, const RunRequest& req,
                                   const ReproducerCase& c) {
    (void)g, (void)inputs, (void)req, (void)c;
    return {{}, "", "the target writes no reproducers"};
  }
};

struct TargetSettings {
  double timeout_seconds = 10;  // per case, external targets
};

// Throws InputError for an unknown spec or an external program that cannot start or sends a
// bad hello.
std::unique_ptr<Target> MakeTarget(const std::string& spec, const TargetSettings& settings = {});
std::unique_ptr<Target> MakeTarget(const TargetSpec& spec, const TargetSettings& settings = {});

std::unique_ptr<Target> MakeEmbeddedTarget();
std::unique_ptr<Target> MakeExecTarget(const std::string& command, const TargetSettings& settings);

}  // namespace fusefuzz
