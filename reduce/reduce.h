// The reduction engine behind `Minimize` (llvm-reduce's delta passes, the Hypothesis shrinker):
// a list of passes, each proposing smaller candidates of a (graph, inputs) case; an invalid
// candidate is skipped without a query, a valid one is kept only when the interestingness test
// (same finding) says so; passes loop to a fixpoint. Every accepted candidate is strictly smaller
// in the total order of `CaseSize`, so the loop terminates.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "kernels/reference/reference.h"

namespace fusefuzz {

struct ReduceCase {
  Graph graph;
  TensorMap inputs;
};

// Lexicographic size: first fewer nodes, then fewer graph outputs, then plainer ops (OpCost:
// fewer epilogue steps, Relu before Clip before Relu6 before other activations), then simpler
// conv/pool/pad geometry, then fewer input + param elements, then simpler values (zeros, +-1,
// powers of two, few significant bits). Geometry comes before elements so that group -> 1 (which
// grows W) counts as a simplification; ops before values so that Relu6 -> Clip(0, 6) does.
struct CaseSize {
  int64_t nodes = 0;
  int64_t outputs = 0;
  int64_t ops = 0;         // sum of OpCost over nodes
  int64_t spellings = 0;   // nodes with a spelling (the plain way is plainer)
  int64_t geometry = 0;    // sum of (kernel-1), (stride-1), (dilation-1), pads, (group-1), ...
  int64_t elements = 0;    // graph input + param elements
  int64_t value_cost = 0;  // sum of ValueCost over input + param elements and float attrs
  auto operator<=>(const CaseSize&) const = default;
};
CaseSize SizeOf(const ReduceCase& c);
// How far a node is from the plainest op of its kind (QLinearConv and QLinearAdd 1 above the
// QuantizeLinear of their values): an activation's rank (Relu 0, Clip 1,
// Relu6 2, any other 3) plus, per epilogue step, 4 and the step's own rank. What the
// canonical-ops pass lowers: minimized cases of one bug then agree on the op wherever the bug
// does not depend on it (docs/minimizer.md).
int64_t OpCost(const Node& n);
int64_t ActivationRank(Op op);

// Cost of one value: 0 for +0, small for +-1 and powers of two, growing with significant bits;
// NaN/Inf are the most expensive. Strictly decreasing along each simplification of `Simplify`.
int64_t ValueCost(float v);
enum class ValueStep { kZero, kOne, kPowerOfTwo, kTwoBits };
float Simplify(float v, ValueStep step);
constexpr ValueStep kValueSteps[] = {ValueStep::kZero, ValueStep::kOne, ValueStep::kPowerOfTwo,
                                     ValueStep::kTwoBits};
std::string_view ValueStepName(ValueStep s);

// Facts about the current case, computed on first use.
class ReduceContext {
 public:
  explicit ReduceContext(const ReduceCase& c) : case_(c) {}
  const ReduceCase& current() const { return case_; }
  const ShapeMap& shapes();          // VerifyGraph(current().graph)
  const RefTensorMap& all_values();  // RunReference(..., all_values = true)

 private:
  const ReduceCase& case_;
  std::optional<ShapeMap> shapes_;
  std::optional<RefTensorMap> values_;
};

// One reduction pass. Its opportunities ("targets") in the current case are numbered 0..n-1 in a
// deterministic order; the engine asks for candidates that apply the pass to chunks of targets
// (all of them, then halves, quarters, ..., single ones). A pass may have several modes, tried in
// order (e.g. a value to 0 before a value to +-1).
class ReducePass {
 public:
  virtual ~ReducePass() = default;
  virtual std::string_view name() const = 0;
  virtual int modes() const { return 1; }
  virtual std::string mode_name(int mode) const { return std::to_string(mode); }
  virtual int64_t Targets(ReduceContext& ctx, int mode) const = 0;
  // The current case with targets [begin, end) reduced, or nullopt when that changes nothing.
  // Need not be valid: the engine cleans dead nodes up and verifies.
  virtual std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                          int64_t end) const = 0;
};

// In the order the engine runs them: coarse first (outputs, nodes), then shapes, then values.
std::vector<std::unique_ptr<ReducePass>> DefaultReducePasses();

#define FUSEFUZZ_REDUCE_PASS(factory) std::unique_ptr<ReducePass> Make##factory##Pass();
#include "reduce/passes.def"
#undef FUSEFUZZ_REDUCE_PASS

struct ReduceOptions {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t max_tests = 0;  // 0 = unlimited; a deterministic bound for tests
  bool verbose = false;   // one line per accepted candidate on stderr
};

struct ReduceStats {
  int64_t tests = 0;       // interestingness tests run (each costs several target runs)
  int64_t candidates = 0;  // candidates proposed (incl. invalid / not smaller / cached)
  int64_t accepted = 0;
  bool stopped_early = false;  // deadline or max_tests hit before the fixpoint
  std::map<std::string, int64_t> accepted_by_pass;
  // Candidates a pass could not build because of an exception other than InputError: a bug in
  // fusefuzz, not a property of the case (builds with FUSEFUZZ_CONTRACTS abort instead).
  int64_t harness_errors = 0;
};

// A non-input exception met while reducing or replaying a candidate: a fusefuzz bug. With
// FUSEFUZZ_CONTRACTS (debug, asan and CI builds) it aborts naming `where`; otherwise the caller
// counts it and treats the candidate as not interesting, so a long campaign keeps going.
void HarnessBug(const std::exception& e, const char* where);

// `interesting` must return true for `start`'s reductions that keep the property (it is not
// called on `start` itself). Returns the smallest case found.
ReduceCase Reduce(ReduceCase start, const std::vector<std::unique_ptr<ReducePass>>& passes,
                  const std::function<bool(const ReduceCase&)>& interesting,
                  const ReduceOptions& opts, ReduceStats* stats);

// --- helpers shared by the passes (graph_edit.cc) ---

// Removes nodes whose output is neither consumed nor a graph output, and graph inputs that are
// neither consumed nor outputs (also from `inputs`).
void RemoveDeadCode(ReduceCase& c);
// Is the case well-formed: graph verifies and every graph input has a tensor of its shape?
bool IsValidCase(const ReduceCase& c);
// Copy of `t` restricted to [begin, begin + count) along `dim`.
Tensor SliceDim(const Tensor& t, size_t dim, int64_t begin, int64_t count);
// After graph input shapes shrank: crops constant params (binary constants, LayerNorm scale and
// bias) whose dims exceed those of the value they meet, so the graph verifies again. Returns
// false when a node no longer infers a shape.
bool RefitConstants(Graph& g);
// Replaces every use of value `from` (node inputs, graph outputs) by `to`.
void ReplaceUses(Graph& g, const std::string& from, const std::string& to);
// Largest channel count, H and W over all rank-4 values of a valid graph.
struct ShapeSummary {
  int64_t channels = 0, height = 0, width = 0;
};
ShapeSummary SummarizeShapes(const Graph& g);

}  // namespace fusefuzz
