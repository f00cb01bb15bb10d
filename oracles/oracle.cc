#include "oracles/oracle.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "ir/error.h"
#include "oracles/grid.h"

namespace fusefuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Num(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

// Per-element judgement of one oracle kind: the allowed |c - r|, and the ratio reported.
struct Judge {
  OracleKind kind;
  double k;
  const OracleOptions& o;
  FormatFacts f;  // the candidate's arithmetic

  // Returns the bound; sets *ratio and *pass. `e` is the error scale (sigma oracle).
  double Apply(double r, double m, double e, float c, double* ratio, bool* pass) const {
    double diff = std::fabs(static_cast<double>(c) - r);
    switch (kind) {
      case OracleKind::kGrid:  // float outputs under the grid oracle: the bound (Compare)
      case OracleKind::kSigma: {
        // The final rounding of r to float32 moves it by up to u|r|/2 whatever sigma says.
        // The reference's sigma is in units of float32's u; a coarser format scales it.
        const double e_f = e * (f.unit_roundoff / kUnitRoundoff);
        double scale = std::max(e_f, f.unit_roundoff * std::fabs(r)) + f.tiny / k;
        *ratio = diff / scale;
        *pass = *ratio <= k;
        return k * scale;
      }
      case OracleKind::kBound: {
        // The final rounding of r to float32 alone moves it by up to u|r|/2, whatever m says.
        double scale = f.unit_roundoff * std::max(m, std::fabs(r)) + f.tiny / k;
        *ratio = diff / scale;
        *pass = *ratio <= k;
        return k * scale;
      }
      case OracleKind::kAllclose: {
        double bound = o.atol + o.rtol * std::fabs(r);
        *ratio = bound > 0 ? diff / bound : (diff == 0 ? 0 : kInf);
        *pass = diff <= bound;
        return bound;
      }
      case OracleKind::kUlp: {
        int64_t d = UlpDistance(static_cast<float>(r), c);
        *ratio = static_cast<double>(d);
        *pass = d <= o.max_ulp;
        return static_cast<double>(o.max_ulp);
      }
    }
    return 0;
  }
  // Whether a change of about |r| (sign flip, dropping a term, scaling) would exceed the bound.
  bool Informative(double r, double bound) const {
    if (kind == OracleKind::kUlp) return r != 0;
    return std::fabs(r) > 2 * bound;
  }
};

// Max, mean, median and 99th percentile (nearest rank) of the judged elements' ratios.
RatioStats RatioStatsOf(std::vector<double> ratios, double limit) {
  RatioStats st;
  st.limit = limit;
  st.n = static_cast<int64_t>(ratios.size());
  if (ratios.empty()) return st;
  std::sort(ratios.begin(), ratios.end());
  double sum = 0;
  for (double r : ratios) sum += r;
  const size_t n = ratios.size();
  st.max = ratios.back();
  st.mean = sum / static_cast<double>(n);
  st.median = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(n)));
  st.p99 = ratios[std::max<size_t>(rank, 1) - 1];
  return st;
}

bool SameNonFinite(double r, float c) {
  if (std::isnan(r)) return std::isnan(c);
  return std::isinf(c) && std::signbit(c) == std::signbit(r);
}

}  // namespace

std::string_view OracleKindName(OracleKind k) {
  switch (k) {
    case OracleKind::kBound:
      return "bound";
    case OracleKind::kAllclose:
      return "allclose";
    case OracleKind::kUlp:
      return "ulp";
    case OracleKind::kSigma:
      return "sigma";
    case OracleKind::kGrid:
      return "grid";
  }
  return "?";
}

std::optional<OracleKind> OracleKindFromName(std::string_view name) {
  for (OracleKind k : {OracleKind::kBound, OracleKind::kAllclose, OracleKind::kUlp,
                       OracleKind::kSigma, OracleKind::kGrid})
    if (OracleKindName(k) == name) return k;
  return std::nullopt;
}

// The description without per-output tolerances.
static std::string BaseDescription(const OracleOptions& o) {
  std::string name(OracleKindName(o.kind));
  switch (o.kind) {
    case OracleKind::kBound:
      return name + " (an element fails beyond k*u*magnitude, k " +
             (o.k > 0 ? Num(o.k) : std::string("derived from the graph")) + ")";
    case OracleKind::kSigma:
      return name + " (an element fails beyond " + Num(o.k > 0 ? o.k : kSigmaFactor) +
             " error scales sigma)";
    case OracleKind::kAllclose:
      return name + " (rtol " + Num(o.rtol) + ", atol " + Num(o.atol) + ")";
    case OracleKind::kUlp:
      return name + " (at most " + std::to_string(o.max_ulp) + " ulps)";
    case OracleKind::kGrid:
      return name + " (an integer element fails beyond 0.5 + E steps of its grid position; " +
             "float outputs: the bound oracle)";
  }
  return name;
}

std::string OracleDescription(const OracleOptions& o) {
  std::string own;
  for (const auto& [out, v] : o.output_tolerance) {
    own += (own.empty() ? "; output '" : ", '") + out + "' " + Num(v);
  }
  if (own.empty()) return BaseDescription(o);
  const std::string base = BaseDescription(o);
  return base.substr(0, base.size() - 1) + own + ")";
}

double LeafRoundings(const Graph& g, Precision p) {
  if (p == Precision::kFloat32) return 0;
  // One rounding of the graph input in every product term, and one per constant factor each
  // node multiplies a term by (docs/oracle.md, "Reduced precision"): a normalization's term
  // carries its scale, its variance (under a square root) and its mean.
  double leaves = 1;
  for (const Node& n : g.nodes) {
    switch (FamilyOf(n.op)) {
      case OpFamily::kNorm:
        leaves += 3;
        break;
      case OpFamily::kConv:
      case OpFamily::kGemm:
      case OpFamily::kBinary:
      case OpFamily::kActivation:
      case OpFamily::kPad:
      case OpFamily::kQuant:  // a Q/DQ scale is a constant factor of its term
        leaves += n.params.empty() && n.attrs.empty() && n.quant.empty() ? 0 : 1;
        break;
      case OpFamily::kPool:
      case OpFamily::kConcat:
      case OpFamily::kIdentity:
      case OpFamily::kReshape:
      case OpFamily::kLayout:
      case OpFamily::kReduce:  // no constant factor: a mean and the unary functions' inputs
      case OpFamily::kMath:    // (their rounding is the input's, carried by the magnitude)
        break;
    }
  }
  return leaves;
}

int64_t UlpDistance(float a, float b) {
  // Map floats onto a line of integers where adjacent floats are adjacent (and +0 == -0).
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

OracleResult Compare(const Graph& original, const RefTensorMap& reference,
                     const TensorMap& candidate, const OracleOptions& opts) {
  OracleResult res;
  // The kind that judges the float outputs; integer-valued ones are judged on the grid always.
  const OracleKind kind_f = opts.kind == OracleKind::kGrid ? OracleKind::kBound : opts.kind;
  GridTally grid;
  std::map<std::string, double> factors;
  // The bound's factors also give the range margin of every kind (below).
  factors = DeriveBoundFactors(original);
  const FormatFacts format = FactsOf(opts.precision);
  const double leaves = LeafRoundings(original, opts.precision);
  bool have_worst = false;
  int64_t nonfinite_failed = 0;  // reference NaN/Inf not matched (not in `compared`)
  std::string structural;        // first shape/arity problem
  Verdict structural_verdict = Verdict::kPass;
  for (const std::string& out : original.outputs) {
    auto rit = reference.find(out);
    if (rit == reference.end()) {
      throw InputError("oracle", "reference has no value for graph output '" + out + "'");
    }
    const RefTensor& ref = rit->second;
    auto cit = candidate.find(out);
    if (cit == candidate.end()) {
      if (structural.empty()) {
        structural = "output '" + out + "' missing from the candidate";
        structural_verdict = Verdict::kTargetError;
      }
      continue;
    }
    const Tensor& cand = cit->second;
    if (cand.size() != NumElements(cand.shape)) {
      if (structural.empty()) {
        structural = "output '" + out + "': candidate has " + std::to_string(cand.size()) +
                     " values for shape " + ShapeToString(cand.shape);
        structural_verdict = Verdict::kTargetError;
      }
      continue;
    }
    if (cand.shape != ref.shape) {
      if (structural.empty() || structural_verdict != Verdict::kMismatch) {
        structural = "output '" + out + "': candidate shape " + ShapeToString(cand.shape) +
                     " != reference shape " + ShapeToString(ref.shape);
        structural_verdict = Verdict::kMismatch;
      }
      continue;
    }
    if (!ref.grid_t.empty()) {
      JudgeGridOutput(out, ref, cand, kind_f == OracleKind::kSigma, &grid);
      continue;
    }
    double k = opts.k > 0 ? opts.k : 1;
    if (!(opts.k > 0) && kind_f == OracleKind::kBound) k = factors.at(out) + leaves;
    if (!(opts.k > 0) && kind_f == OracleKind::kSigma) k = kSigmaFactor;
    // This output's own tolerance, when given: k, or allclose's and ulp's parameters scaled.
    OracleOptions own = opts;
    if (auto t = opts.output_tolerance.find(out); t != opts.output_tolerance.end()) {
      if (kind_f == OracleKind::kBound || kind_f == OracleKind::kSigma) k = t->second;
      own.rtol = opts.rtol * t->second;
      own.atol = opts.atol * t->second;
      own.max_ulp = static_cast<int64_t>(std::floor(t->second));
    }
    if (kind_f == OracleKind::kSigma && ref.sigma.size() != ref.value.size()) {
      throw InputError("oracle", "reference for output '" + out + "' has no error scales");
    }
    res.k = std::max(res.k, k);
    Judge judge{kind_f, k, own, format};
    std::vector<double> ratios;
    // Range inside the graph (docs/oracle.md, "Reduced-precision targets"): the element is not
    // judged when a value of its computation may exceed the format's largest number. Its
    // reference peak bounds the exact intermediates; a computed one exceeds its exact value by
    // at most the relative error the bound admits, (k + L) u_f.
    const double range_k = kind_f == OracleKind::kBound ? k : factors.at(out) + leaves;
    const double peak_limit = format.max / (1 + range_k * format.unit_roundoff);
    const bool has_peak = ref.peak.size() == ref.value.size();
    for (size_t i = 0; i < ref.value.size(); ++i) {
      const double r = ref.value[i], m = ref.mag[i];
      const double e = kind_f == OracleKind::kSigma ? ref.sigma[i] : 0;
      const float c = cand.data[i];
      double ratio = 0, bound = 0;
      bool pass = true;
      if (!std::isfinite(r)) {
        // Infinities and NaNs from the inputs must come out in the same place with the same sign.
        pass = SameNonFinite(r, c);
        if (pass) {
          ++res.nonfinite;
          continue;
        }
        ratio = kInf;
      } else if (std::fabs(r) > format.max || !(m <= format.max) ||
                 (has_peak && !(ref.peak[i] <= peak_limit)) ||
                 (kind_f == OracleKind::kSigma && !(e <= FLT_MAX))) {
        ++res.overflowed;  // the computation in its format may legitimately overflow here
        continue;
      } else if (!std::isfinite(c)) {
        ++res.compared;
        double unused_ratio = 0;
        bool unused_pass = true;
        bound = judge.Apply(r, m, e, static_cast<float>(r), &unused_ratio, &unused_pass);
        pass = false;
        ratio = kInf;
      } else {
        ++res.compared;
        bound = judge.Apply(r, m, e, c, &ratio, &pass);
        if (judge.Informative(r, bound)) ++res.informative;
        if (opts.element_stats) ratios.push_back(ratio);
      }
      if (!pass) ++res.failed;
      if (!std::isfinite(r)) ++nonfinite_failed;
      if (!have_worst || ratio > res.worst.ratio) {
        res.worst = {out, static_cast<int64_t>(i), r, static_cast<double>(c), bound, ratio};
        have_worst = true;
      }
    }
    if (opts.element_stats) {
      res.stats[out] = RatioStatsOf(std::move(ratios), kind_f == OracleKind::kAllclose ? 1.0
                                                       : kind_f == OracleKind::kUlp
                                                           ? static_cast<double>(own.max_ulp)
                                                           : k);
    }
  }
  // Merge the grid judgement: counts, and the worst element by its normalized score (> 1 fails).
  const int64_t float_failed = res.failed, float_compared = res.compared;
  const int64_t float_informative = res.informative;
  res.grid = grid.s;
  res.compared += grid.s.compared;
  res.failed += grid.s.failed;
  res.informative += grid.s.informative;
  const double threshold = kind_f == OracleKind::kUlp ? std::max<double>(1, double(opts.max_ulp))
                           : kind_f == OracleKind::kAllclose ? 1.0
                                                             : std::max(res.k, 1e-300);
  const bool float_judged = have_worst;
  const WorstElement float_worst = res.worst;
  if (grid.have_worst && (!have_worst || grid.worst_score > res.worst.ratio / threshold)) {
    res.worst = grid.worst;
    have_worst = true;
  }
  std::string kind(OracleKindName(kind_f));
  const WorstElement& w = res.worst;
  std::string where = "output '" + w.output + "' element " + std::to_string(w.index);
  const bool k_kind = kind_f == OracleKind::kBound || kind_f == OracleKind::kSigma;
  std::string float_detail;
  if (float_judged && float_failed > 0) {
    float_detail = kind + ": " + std::to_string(float_failed) + " of " +
                   std::to_string(float_compared + res.nonfinite + nonfinite_failed) +
                   " elements fail";
  } else if (float_judged) {
    float_detail = kind + ": " + std::to_string(float_compared) + " elements pass (" +
                   std::to_string(float_informative) + " informative)";
  }
  auto join = [](const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + "; " + b;
  };
  const std::string grid_detail = grid.s.compared > 0 ? GridDetail(grid) : "";
  if (!structural.empty()) {
    res.verdict = structural_verdict;
    res.detail = structural;
    if (res.failed > 0) res.detail += "; also " + std::to_string(res.failed) + " elements differ";
  } else if (res.failed > 0) {
    res.verdict = Verdict::kMismatch;
    if (w.on_grid) {
      res.detail = join(float_detail, grid_detail);
    } else {
      res.detail = join(float_detail + "; worst " + where + ": reference " + Num(w.reference) +
                            ", candidate " + Num(w.candidate) + ", bound " + Num(w.bound) +
                            ", ratio " + Num(w.ratio) + (k_kind ? " > k " + Num(res.k) : ""),
                        grid.s.failed > 0 ? grid_detail : "");
    }
  } else if (res.compared < opts.min_compared || res.informative < opts.min_informative ||
             (grid.s.compared > 0 && grid.s.informative == 0)) {
    res.verdict = Verdict::kMistrusted;
    res.detail = kind + ": the data cannot tell: " + std::to_string(res.compared) +
                 " judged elements, " + std::to_string(res.informative) +
                 " informative (|r| > 2*bound" +
                 (grid.s.compared > 0 ? "; on the grid: not saturated and E <= 1 step" : "") +
                 "), " + std::to_string(res.overflowed) + " overflowed, " +
                 std::to_string(res.nonfinite) + " non-finite" +
                 (grid.s.compared > 0
                      ? ", " + std::to_string(grid.s.saturated) + " integer elements saturated"
                      : "");
  } else {
    res.verdict = Verdict::kPass;
    std::string f;
    if (float_judged) {
      f = float_detail + ", worst ratio " + Num(float_worst.ratio) + " at output '" +
          float_worst.output + "' element " + std::to_string(float_worst.index) +
          (k_kind ? ", k " + Num(res.k) : "");
    }
    res.detail = join(f, grid_detail);
  }
  return res;
}

}  // namespace fusefuzz
