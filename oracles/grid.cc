// The integer-grid oracle (docs/oracle.md, "The integer-grid oracle"): an integer-valued output
// element passes when the engine's integer c lies within 0.5 + E steps of the reference's
// unrounded grid position t (clamped to the type's range); the report speaks in steps.
#include "oracles/grid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace fusefuzz {
namespace {

std::string Num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

// An engine saturating short of the type's limit (at -127 for int8, or qmax - k): every wrong
// element holds one integer a few steps inside a limit, and the reference goes past it. ""
// when the failing elements do not look so.
std::string SaturationLimit(const std::string& o, const RefTensor& ref, const Tensor& cand,
                            const std::vector<int64_t>& bad) {
  constexpr double kNear = 16;  // steps from the limit
  const double v = static_cast<double>(cand.data[static_cast<size_t>(bad.front())]);
  const double qmin = static_cast<double>(ref.grid_qmin), qmax = static_cast<double>(ref.grid_qmax);
  const bool low = v > qmin && v - qmin <= kNear, high = v < qmax && qmax - v <= kNear;
  if (!low && !high) return "";
  for (int64_t i : bad) {
    const size_t k = static_cast<size_t>(i);
    if (static_cast<double>(cand.data[k]) != v) return "";
    if (low ? !(ref.grid_t[k] < v) : !(ref.grid_t[k] > v)) return "";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  const std::string at = buf;
  std::snprintf(buf, sizeof buf, "%.0f", low ? qmin : qmax);
  return std::to_string(bad.size()) + " element" + (bad.size() == 1 ? "" : "s") + " of " + o +
         " stop at " + at + " where the reference goes past it toward the limit " + buf +
         ": a saturation limit (the engine clamps at " + at + ", not " + buf + ")";
}

// Where the failing elements of one output are, with the usual cause of each pattern.
std::string Locate(const std::string& out, const RefTensor& ref, const Tensor& cand,
                   const std::vector<int64_t>& bad, int64_t judged) {
  const std::string o = "output '" + out + "'";
  if (bad.empty()) return "";
  const Shape& shape = ref.shape;
  if (std::string limit = SaturationLimit(o, ref, cand, bad); !limit.empty()) return limit;
  if (shape.size() == 4) {
    const int64_t c = shape[1], h = shape[2], w = shape[3];
    std::set<int64_t> channels;
    bool border = true;
    for (int64_t i : bad) {
      channels.insert((i / (h * w)) % c);
      const int64_t y = (i / w) % h, x = i % w;
      border &= y == 0 || y == h - 1 || x == 0 || x == w - 1;
    }
    if (channels.size() == 1 && c > 1) {
      return "one channel (" + std::to_string(*channels.begin()) + ") of " + o +
             ": its zero point, bias or weight scale";
    }
    if (border && h > 2 && w > 2) return "the border of " + o + ": padding (pad value, zero point)";
  }
  if (2 * static_cast<int64_t>(bad.size()) >= judged) {
    return "everywhere in " + o + ": a scale, zero point or activation";
  }
  return std::to_string(bad.size()) + " scattered elements of " + o +
         ": rounding, a clamp bound or saturation";
}

struct GridInterval {
  double lo = 0, hi = 0;   // the admitted integers [lo, hi]
  bool saturated = false;  // t beyond the range by more than 0.5 + E: only the limit passes
};

GridInterval AdmittedIntegers(double t, double e, int64_t qmin, int64_t qmax) {
  const auto [lo, hi] = AdmittedRange(t, e, qmin, qmax);
  GridInterval g;
  g.lo = lo;
  g.hi = hi;
  g.saturated = t - 0.5 - e > static_cast<double>(qmax) || t + 0.5 + e < static_cast<double>(qmin);
  return g;
}

}  // namespace

double GridExcess(double c, double t, double e, int64_t qmin, int64_t qmax) {
  if (!std::isfinite(c)) return INFINITY;
  const GridInterval g = AdmittedIntegers(t, e, qmin, qmax);
  const bool integral = c == std::nearbyint(c);
  const double outside = c < g.lo ? g.lo - c : c > g.hi ? c - g.hi : 0;
  if (!integral) return std::max(outside, 0.5);
  if (outside > 0) return outside;
  return g.saturated ? 0 : std::min(std::fabs(c - t) - 0.5 - e, 0.0);
}

void JudgeGridOutput(const std::string& out, const RefTensor& ref, const Tensor& cand, bool sigma,
                     GridTally* tally) {
  const std::vector<double>& half_width = sigma && !ref.grid_es.empty() ? ref.grid_es : ref.grid_e;
  std::vector<int64_t> bad;
  int64_t judged = 0, saturated = 0;
  for (size_t i = 0; i < ref.value.size(); ++i) {
    const double t = ref.grid_t[i], e = half_width[i];
    if (std::isnan(t)) continue;  // a NaN quantized: undefined in ONNX, not judged
    ++judged;
    ++tally->s.compared;
    const GridInterval g = AdmittedIntegers(t, e, ref.grid_qmin, ref.grid_qmax);
    const double c = static_cast<double>(cand.data[i]);
    const bool integral = std::isfinite(c) && c == std::nearbyint(c);
    const bool pass = integral && c >= g.lo && c <= g.hi;
    if (g.saturated) {
      ++saturated;
      ++tally->s.saturated;
    } else if (e <= 1) {
      ++tally->s.informative;
    }
    const double excess = GridExcess(c, t, e, ref.grid_qmin, ref.grid_qmax);
    // Normalized so that > 1 fails, like the float oracles' ratio / k.
    const double score = pass ? std::fabs(c - t) / (0.5 + e + (g.saturated ? 1e300 : 0))
                              : 1 + std::max(excess, 1e-9);
    if (!pass) {
      ++tally->s.failed;
      bad.push_back(static_cast<int64_t>(i));
    }
    if (!tally->have_worst || score > tally->worst_score) {
      tally->have_worst = true;
      tally->worst_score = score;
      tally->worst = {out, static_cast<int64_t>(i), ref.value[i], c, 0.5 + e, score, true};
      tally->s.t = t;
      tally->s.e = e;
      tally->s.lo = g.lo;
      tally->s.hi = g.hi;
      tally->s.excess = excess;
    }
  }
  const std::string where = Locate(out, ref, cand, bad, judged - saturated);
  if (!where.empty()) tally->s.where += (tally->s.where.empty() ? "" : "; ") + where;
}

std::string GridDetail(const GridTally& tally) {
  const WorstElement& w = tally.worst;
  const GridSummary& g = tally.s;
  const std::string at = "output '" + w.output + "' element " + std::to_string(w.index);
  const std::string worst = "t " + Num(g.t) + ", admitted [" + Num(g.lo) + ", " + Num(g.hi) +
                            "] (E " + Num(g.e) + " steps), candidate " + Num(w.candidate);
  if (g.failed > 0) {
    return "grid: " + std::to_string(g.failed) + " of " + std::to_string(g.compared) +
           (g.compared == 1 ? " integer element fails" : " integer elements fail") + "; worst " +
           at + ": " + worst + ", excess " + Num(g.excess) + " steps; failing: " + g.where;
  }
  return "grid: " + std::to_string(g.compared) +
         (g.compared == 1 ? " integer element passes (" : " integer elements pass (") +
         std::to_string(g.informative) + " informative, " + std::to_string(g.saturated) +
         " saturated), worst excess " + Num(g.excess) + " steps at " + at;
}

}  // namespace fusefuzz
