#include "report/integers_section.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kernels/reference/reference.h"
#include "report/finding_report.h"
#include "report/markdown.h"

namespace fusefuzz {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct ChannelRow {
  int64_t elements = 0, failing = 0;
  int64_t worst = -1;  // flat index of the worst element
  double excess = -1e300;
};

}  // namespace

std::string IntegersSection(const Repro& r, const Graph* after, const Tensor* answered) {
  if (!r.worst.on_grid || r.worst.output.empty()) return "";
  RefTensorMap ref, aft;
  try {
    ref = RunReference(r.graph, r.inputs);
    if (after) aft = RunReference(*after, r.inputs);
  } catch (const std::exception&) {
    return "";  // the other sections say what cannot run
  }
  auto it = ref.find(r.worst.output);
  if (it == ref.end() || it->second.grid_t.empty()) return "";
  const RefTensor& t = it->second;
  // The integers compared: the reference's after the blamed rewrite (the embedded optimizer's
  // graph), else the target's own answer (an external target reports no graph), else none.
  const std::vector<double>* a = nullptr;
  std::vector<double> answer_values;
  if (after) {
    auto ai = aft.find(r.worst.output);
    if (ai != aft.end() && ai->second.value.size() == t.value.size()) a = &ai->second.value;
  } else if (answered && answered->data.size() == t.value.size()) {
    answer_values.assign(answered->data.begin(), answered->data.end());
    a = &answer_values;
  }
  const std::string column = after ? "after rewrite" : "target";
  // The half-width the finding was judged with: the sigma machinery's under --oracle sigma.
  const std::vector<double>& e =
      r.oracle.kind == OracleKind::kSigma && !t.grid_es.empty() ? t.grid_es : t.grid_e;
  const Shape& s = t.shape;
  const int64_t channels = s.size() >= 2 ? s[1] : 1;
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  std::vector<ChannelRow> rows(static_cast<size_t>(channels));
  for (size_t i = 0; i < t.value.size(); ++i) {
    const int64_t c = s.size() >= 2 ? (int64_t(i) / inner) % channels : 0;
    ChannelRow& row = rows[size_t(c)];
    ++row.elements;
    const auto [lo, hi] = AdmittedRange(t.grid_t[i], e[i], t.grid_qmin, t.grid_qmax);
    double excess = 0;
    if (a) {
      const double v = (*a)[i];
      excess = v < lo ? lo - v : v > hi ? v - hi : -std::min(v - lo, hi - v);
      if (v < lo || v > hi) ++row.failing;
    }
    if (excess > row.excess) {
      row.excess = excess;
      row.worst = int64_t(i);
    }
  }
  std::ostringstream md;
  md << "## Integers of " << MdCode(r.worst.output) << "\n\n"
     << "The grid oracle judges integers: a correct engine's integer c satisfies |c - t| <= 0.5 + "
        "E "
        "within ["
     << t.grid_qmin << ", " << t.grid_qmax
     << "], t the reference's unrounded grid "
        "position, E the admitted extra half-width derived from the graph (docs/quantization.md). "
     << (!a ? "Per output channel, the reference's values."
         : after
             ? "Per output channel, its worst element; \"after rewrite\" is the reference's value "
               "of the graph right after the blamed rewrite, the excess is in steps (> 0 fails)."
             : "Per output channel, its worst element; \"target\" is the integer the target "
               "answered on its failing run, the excess is in steps (> 0 fails).")
     << "\n\n| channel | elements | failing | worst at | t | E | admitted | "
     << (a ? column + " | excess |" : std::string("|")) << "\n|---:|---:|---:|---|---:|---:|---|"
     << (a ? "---:|---:|" : "") << "\n";
  int64_t shown = 0, failing_channels = 0;
  for (size_t c = 0; c < rows.size(); ++c) failing_channels += rows[c].failing > 0;
  for (size_t c = 0; c < rows.size() && shown < 16; ++c) {
    const ChannelRow& row = rows[c];
    // Failing channels first when many: show every failing one, then the others up to 16 rows.
    if (failing_channels > 0 && row.failing == 0 && rows.size() > 16) continue;
    ++shown;
    const size_t i = size_t(row.worst);
    const auto [lo, hi] = AdmittedRange(t.grid_t[i], e[i], t.grid_qmin, t.grid_qmax);
    md << "| " << c << " | " << row.elements << " | " << (a ? std::to_string(row.failing) : "-")
       << " | " << Coordinates(int64_t(i), s) << " | " << Num(t.grid_t[i]) << " | " << Num(e[i])
       << " | " << (lo == hi ? Num(lo) : "[" + Num(lo) + ", " + Num(hi) + "]") << " |";
    if (a) md << " " << Num((*a)[i]) << " | " << Num(row.excess + 0.0) << " |";
    md << "\n";
  }
  if (shown < int64_t(rows.size())) {
    md << "\n(" << rows.size() - size_t(shown) << " more channels not shown.)\n";
  }
  md << "\n";
  return md.str();
}

}  // namespace fusefuzz
