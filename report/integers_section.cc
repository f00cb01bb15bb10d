#include "report/integers_section.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kernels/reference/reference.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "oracles/grid.h"
#include "report/finding_report.h"
#include "report/markdown.h"

namespace fusefuzz {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The one definition of "excess" (oracles/grid.h), stated where the numbers are.
constexpr const char* kExcessMeaning =
    "The excess is in steps: outside the admitted integers, the distance to the nearer one "
    "(> 0 fails); inside, the margin left, |c - t| - 0.5 - E (<= 0).";

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
    // The oracle's own excess (oracles/grid.h, GridExcess): the detail line and this table
    // say the same number for the same element (issue 45, item 2).
    double excess = 0;
    if (a) {
      excess = GridExcess((*a)[i], t.grid_t[i], e[i], t.grid_qmin, t.grid_qmax);
      if (excess > 0) ++row.failing;
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
               "of the graph right after the blamed rewrite. " +
                   std::string(kExcessMeaning)
             : "Per output channel, its worst element; \"target\" is the integer the target "
               "answered on its failing run. " +
                   std::string(kExcessMeaning))
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

std::string ClampBoundsSection(const Graph& g) {
  std::ostringstream md;
  int rows = 0;
  for (const Node& act : g.nodes) {
    if (act.op != Op::Relu6 && act.op != Op::Clip) continue;
    double bounds[2] = {0, 0};
    if (!ActivationBounds(act, &bounds[0], &bounds[1]).empty()) continue;
    for (int qi : g.Consumers(act.output)) {
      const Node& q = g.nodes[size_t(qi)];
      auto y = q.quant.find("y");
      if (q.op != Op::QuantizeLinear || y == q.quant.end() || y->second.PerAxis()) continue;
      const QuantParams& p = y->second;
      const double s = p.Scale(0), z = double(p.ZeroPoint(0));
      if (!(s > 0)) continue;
      if (rows++ == 0) {
        md << "## Clamp bounds on the grid\n\n"
              "Each bound b of a clamp before a QuantizeLinear, as s·(q − z) with q = b/s + z "
              "its unrounded grid position. The clamp changes nothing after the Q only when "
              "Q(b) is the type's limit, i.e. q is on the limit's side of the half step "
              "(qmin + 0.5 for the lower bound, qmax − 0.5 for the upper): the margin is that "
              "distance in steps (> 0: Q(b) is the limit, the clamp may be dropped; <= 0: it "
              "clamps, and dropping it is a bug).\n\n"
              "| node | bound | b | s·(q − z) | Q(b) | limit | half-step margin |\n"
              "|---|---|---:|---|---:|---:|---:|\n";
      }
      for (int side = 0; side < 2; ++side) {
        const double b = bounds[side];
        if (!std::isfinite(b)) continue;
        const double t = b / s + z;
        const double limit = side == 0 ? double(p.qmin()) : double(p.qmax());
        const double qb = std::clamp(std::nearbyint(t), double(p.qmin()), double(p.qmax()));
        const double margin = side == 0 ? limit + 0.5 - t : t - (limit - 0.5);
        char buf[160];
        std::snprintf(buf, sizeof buf, "%.9g·(%.6g − %.0f)", s, t, z);
        md << "| " << MdCode(act.name) << " | " << (side == 0 ? "min" : "max") << " | " << Num(b)
           << " | " << buf << " | " << Num(qb) << " | " << Num(limit) << " | " << Num(margin)
           << " |\n";
      }
    }
  }
  if (rows > 0) md << "\n";
  return md.str();
}

}  // namespace fusefuzz
