// Oracles: judge a candidate's outputs against the reference (value + magnitude per element).
// No test-framework dependency. See docs/oracle.md for the bound, its derivation and the
// MISTRUSTED rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/precision.h"
#include "ir/tensor.h"
#include "kernels/reference/reference.h"
#include "oracles/verdict.h"

namespace fusefuzz {

enum class OracleKind {
  kBound,     // |c - r| <= k*u*max(m, |r|) + tiny, k derived from the graph (default)
  kAllclose,  // |c - r| <= atol + rtol*|r|
  kUlp,       // float32 ulp distance between c and float(r) <= max_ulp
  kSigma,     // |c - r| <= k*max(sigma, u*|r|) + tiny: the statistical error scale (deep models)
  // The integer-grid oracle (docs/oracle.md): |c - t| <= 0.5 + E steps on integer-valued
  // outputs; float outputs are judged by the bound oracle. Integer-valued outputs are judged on
  // the grid under every kind (a float oracle cannot judge an integer grid); naming it keeps the
  // float outputs on the bound oracle.
  kGrid,
};
std::string_view OracleKindName(OracleKind k);  // "bound", "allclose", "ulp", "sigma", "grid"
struct OracleOptions;
// One line for a human: the oracle and what makes an element fail, e.g. "sigma (an element fails
// beyond 8 error scales)".
std::string OracleDescription(const OracleOptions& o);
std::optional<OracleKind> OracleKindFromName(std::string_view name);

struct OracleOptions {
  OracleKind kind = OracleKind::kBound;
  double k = 0;  // bound: > 0 overrides the factor derived from the graph; sigma: > 0 overrides
                 // kSigmaFactor
  double rtol = 1e-5, atol = 1e-6;  // allclose
  int64_t max_ulp = 4;              // ulp
  // The arithmetic the candidate claims (its target's hello): bound and sigma use its unit
  // roundoff, smallest normal and overflow threshold, and the bound adds the rounding of the
  // graph's inputs and constants into the format (docs/oracle.md, "Reduced precision").
  Precision precision = Precision::kFloat32;
  // MISTRUSTED unless at least this many elements are judged (finite, not overflowed) and at
  // least this many are informative (|r| > 2 * bound: a semantic change of about |r| would fail).
  int64_t min_compared = 1;
  int64_t min_informative = 1;
  // Also fill OracleResult::stats (`fusefuzz check`): costs a copy and a sort of the ratios.
  bool element_stats = false;
  // Per graph output (`check --tolerance OUTPUT=VALUE`): that output's limit in the oracle's
  // units, the ratio above which an element fails (RatioStats::limit): k for bound and sigma,
  // the factor on atol + rtol|r| for allclose, the ulps for ulp. Other outputs keep the above.
  std::map<std::string, double> output_tolerance;
};

// How the judged elements of one output sit against its tolerance, in the oracle's units (the
// WorstElement ratio: bound and sigma fail above k, allclose above 1, ulp above max_ulp).
struct RatioStats {
  int64_t n = 0;  // judged finite elements
  double max = 0, mean = 0, median = 0, p99 = 0;
  double limit = 0;  // the ratio above which an element fails (k, 1 or max_ulp)
};

struct WorstElement {
  std::string output;  // graph output name ("" when nothing was compared)
  int64_t index = -1;  // flat row-major index
  double reference = 0, candidate = 0;
  double bound = 0;  // the allowed |c - r| for this element
  // bound: |c - r| / (u*max(m,|r|) + tiny/k), i.e. in units of u*m, fails when > k;
  // sigma: |c - r| / (max(sigma, u|r|) + tiny/k), in sigmas, fails when > k;
  // allclose: |c - r| / bound; ulp: the ulp distance. +inf for a NaN/Inf disagreement.
  double ratio = 0;
  // An integer-valued element (the grid oracle): reference = the reference's integer, bound =
  // 0.5 + E (steps), ratio = |c - t| / (0.5 + E) when it passes, 1 + excess when it fails.
  bool on_grid = false;
};

// The integer-grid oracle over the integer-valued outputs of one comparison.
struct GridSummary {
  int64_t compared = 0;     // integer-valued elements judged (NaN positions are not)
  int64_t saturated = 0;    // t beyond the range by more than 0.5 + E: must equal the limit
  int64_t informative = 0;  // not saturated and E <= 1 step
  int64_t failed = 0;
  // The worst integer element: its t, E, admitted integers [lo, hi] and the excess in steps,
  // |c - t| - 0.5 - E (saturated: |c - limit|; > 0 fails, <= 0 the margin left).
  double t = 0, e = 0, lo = 0, hi = 0, excess = 0;
  // Where the failing elements are, per output: "one channel (3) of output 'y': ...", "the
  // border of ...", "everywhere in ...", "n scattered elements of ...".
  std::string where;
};

struct OracleResult {
  Verdict verdict = Verdict::kPass;
  std::string detail;  // one line for logs and reports
  WorstElement worst;
  int64_t compared = 0;  // judged finite elements
  // |r|, m, or a value inside the element's computation (RefTensor::peak) beyond the format's
  // range: the computation may legitimately overflow; not judged.
  int64_t overflowed = 0;
  int64_t nonfinite = 0;    // reference NaN/Inf matched by the candidate
  int64_t failed = 0;       // elements outside their bound (incl. NaN/Inf disagreements)
  int64_t informative = 0;  // judged elements with |r| > 2 * bound
  double k = 0;             // bound factor used (largest over the outputs)
  GridSummary grid;         // integer-valued outputs (counted in compared/failed/informative too)
  std::map<std::string, RatioStats> stats;  // per float output, with element_stats
};

// Compares every output of `original` (the graph the reference ran). Throws InputError when
// `reference` lacks an output (a harness bug); a missing or mis-sized candidate output is
// TARGET_ERROR, a candidate of a different shape is MISMATCH.
OracleResult Compare(const Graph& original, const RefTensorMap& reference,
                     const TensorMap& candidate, const OracleOptions& opts = {});

// Roundings a reduced-precision run adds before any arithmetic: every graph input and constant
// is converted into the format once; 0 for float32, which the graph's data already is.
double LeafRoundings(const Graph& g, Precision p);

// The bound factor k of each value of a (verified) graph, derived from its reduction lengths and
// rounding stages along the worst path from the inputs (docs/oracle.md).
std::map<std::string, double> DeriveBoundFactors(const Graph& g);
double DeriveBoundFactor(const Graph& g, const std::string& output);

// Float32 unit roundoff 2^-24 and the floor added to every bound (the smallest normal float:
// differences below it are flush-to-zero noise, not semantics).
inline constexpr double kUnitRoundoff = 0x1.0p-24;
inline constexpr double kTinyFloor = 0x1.0p-126;
// The sigma oracle's default factor: an element fails beyond kSigmaFactor error scales
// (docs/oracle.md, "The sigma oracle": why 8).
inline constexpr double kSigmaFactor = kSigmaProbe;

// Why `value` is not acceptable for the oracle parameter `name` ("k", "rtol", "atol",
// "max_ulp"), e.g. "must be a finite number > 0"; empty when it is. Shared by the command line
// and reproducer files so both refuse the same values (oracles/oracle_params.cc).
std::string OracleParamProblem(std::string_view name, double value);

// Distance in float32 ulps between two finite floats (0 for +0 vs -0).
int64_t UlpDistance(float a, float b);

}  // namespace fusefuzz
