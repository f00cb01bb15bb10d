#include "cli/bench_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "ir/error.h"
#include "ir/folder_write.h"
#include "report/campaign_summary.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// Markdown cells: a pipe would end the cell, a newline the row.
std::string MdCell(const std::string& s) {
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

double Speedup(const BenchCell& c) {
  const double u = Median(c.unfused_ns), f = Median(c.fused_ns);
  return u > 0 && f > 0 ? u / f : 0;
}

void AddRuns(const BenchTable& t, const BenchRow& row, size_t engine, const char* variant,
             const std::vector<double>& ns, const std::vector<double>& min_ns, int family,
             json* out) {
  if (ns.empty()) return;
  const BenchCell& cell = row.cells[engine];
  const std::string run = row.name + "/" + t.engines[engine].label + "/" + variant;
  auto entry = [&](const std::string& name, double value) {
    return json{{"name", name},
                {"family_index", family},
                {"per_family_instance_index", 0},
                {"run_name", run},
                {"repetitions", static_cast<int>(ns.size())},
                {"threads", t.threads},
                {"real_time", value},
                {"cpu_time", value},  // the target's own clock: wall time (docs/benchmarks.md)
                {"time_unit", "ns"}};
  };
  for (size_t i = 0; i < ns.size(); ++i) {
    json e = entry(run, ns[i]);
    e["run_type"] = "iteration";
    e["repetition_index"] = static_cast<int>(i);
    e["iterations"] = t.runs;
    e["min_ns"] = min_ns[i];
    e["label"] = cell.verdict;
    if (row.ops > 0) e["OP"] = row.ops / (ns[i] * 1e-9);
    out->push_back(std::move(e));
  }
  const double mean = std::accumulate(ns.begin(), ns.end(), 0.0) / static_cast<double>(ns.size());
  const double cv = CoefficientOfVariation(ns);
  const std::pair<const char*, double> aggregates[] = {
      {"mean", mean}, {"median", Median(ns)}, {"stddev", cv * mean}, {"cv", cv}};
  for (const auto& [agg, value] : aggregates) {
    json e = entry(run + "_" + agg, value);
    e["run_type"] = "aggregate";
    e["aggregate_name"] = agg;
    e["aggregate_unit"] = std::string(agg) == "cv" ? "percentage" : "time";
    e["iterations"] = static_cast<int>(ns.size());
    e["label"] = cell.verdict;
    if (row.ops > 0 && (std::string(agg) == "mean" || std::string(agg) == "median")) {
      e["OP"] = row.ops / (value * 1e-9);
    }
    out->push_back(std::move(e));
  }
}

const char* const kColors[] = {"#3366cc", "#ff9900", "#109618", "#dc3912", "#990099", "#0099c6"};

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double CoefficientOfVariation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double n = static_cast<double>(v.size());
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return mean > 0 ? std::sqrt(ss / (n - 1)) / mean : 0;
}

json BenchJson(const BenchTable& t) {
  json benchmarks = json::array();
  int family = 0;
  for (const BenchRow& row : t.rows) {
    for (size_t e = 0; e < t.engines.size(); ++e) {
      const BenchCell& c = row.cells[e];
      AddRuns(t, row, e, "unfused", c.unfused_ns, c.unfused_min_ns, family++, &benchmarks);
      AddRuns(t, row, e, "fused", c.fused_ns, c.fused_min_ns, family++, &benchmarks);
    }
  }
  json verdicts = json::object(), rewrites = json::object();
  for (const BenchRow& row : t.rows) {
    for (size_t e = 0; e < t.engines.size(); ++e) {
      verdicts[row.name + "/" + t.engines[e].label] = row.cells[e].verdict;
      if (!row.cells[e].rewrites.empty()) {
        rewrites[row.name + "/" + t.engines[e].label] = row.cells[e].rewrites;
      }
    }
  }
  json engines = json::array();
  for (const BenchEngine& e : t.engines) engines.push_back({{"label", e.label}, {"spec", e.spec}});
  json context = t.context;
  context["fusefuzz_engines"] = std::move(engines);
  context["fusefuzz_repetitions"] = t.repetitions;
  context["fusefuzz_runs"] = t.runs;
  context["fusefuzz_warmup"] = t.warmup;
  context["fusefuzz_command"] = t.command;
  context["fusefuzz_verdicts"] = std::move(verdicts);
  context["fusefuzz_rewrites"] = std::move(rewrites);
  return {{"context", std::move(context)}, {"benchmarks", std::move(benchmarks)}};
}

std::string LoadAverageText(const json& load_avg) {
  if (!load_avg.is_array() || load_avg.empty()) return "?";
  std::string s;
  for (const json& v : load_avg) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v.is_number() ? v.get<double>() : 0.0);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return s + " (1, 5, 15 min)";
}

bool WrongNumbers(const std::string& verdict) {
  return verdict.find("MISMATCH") != std::string::npos;
}

std::string BenchMarkdown(const BenchTable& t) {
  std::ostringstream o;
  const json& ctx = t.context;
  const bool int8 =
      std::any_of(t.rows.begin(), t.rows.end(), [](const BenchRow& r) { return r.ops > 0; });
  o << (int8 ? "# fusefuzz bench --quant: int8 fusion speedup per engine (QDQ graphs)\n\n"
             : "# fusefuzz bench: fusion speedup per engine\n\n");
  o << "- date: " << ctx.value("date", "?") << ", host: " << ctx.value("host_name", "?")
    << ", CPUs: " << ctx.value("num_cpus", 0)
    << ", load average at start: " << LoadAverageText(ctx.value("load_avg", json::array())) << "\n";
  o << "- command: `" << t.command << "`\n";
  for (const BenchEngine& e : t.engines) {
    o << "- engine **" << e.label << "**: `" << e.spec << "`" << (e.about.empty() ? "" : "; ")
      << e.about << "\n";
  }
  o << "- each time: the median over " << t.repetitions
    << " repetitions of the engine's own median of " << t.runs << " timed runs after " << t.warmup
    << " warm-ups, in microseconds, " << t.threads
    << " intra-op thread(s); cv: coefficient of variation of the repetitions (unfused / fused); "
       "speedup: unfused / fused; verdict: fusefuzz's oracle on the outputs of the timed runs "
       "(\"kernel:\" when the unfused run already failed)"
    << (int8 ? "; GOPS: 2 ops per multiply-add of the conv, over the median time" : "") << "\n\n";
  // One line per case and engine (issue 45, item 11): 7 engines side by side made a
  // 45-column table no screen shows; this way the columns stay the same for any number of
  // engines, and one case's engines sit on adjacent lines.
  o << "| pattern | layer | shape | engine | unfused µs | fused µs |"
    << (int8 ? " unfused GOPS | fused GOPS |" : "") << " speedup | cv % | verdict |\n"
    << "|---|---|---|---|---:|---:|" << (int8 ? "---:|---:|" : "") << "---:|---:|---|\n";
  std::vector<std::string> notes;
  for (const BenchRow& row : t.rows) {
    for (size_t e = 0; e < t.engines.size(); ++e) {
      const BenchCell& c = row.cells[e];
      auto us = [](const std::vector<double>& v) {
        return v.empty() ? std::string("-") : Fixed(Median(v) / 1e3, 1);
      };
      const double s = Speedup(c);
      std::string cv = "-";
      if (c.unfused_ns.size() > 1 && c.fused_ns.size() > 1) {
        cv = Fixed(100 * CoefficientOfVariation(c.unfused_ns), 1) + " / " +
             Fixed(100 * CoefficientOfVariation(c.fused_ns), 1);
      }
      std::string verdict = MdCell(c.verdict);
      if (!c.note.empty()) {
        notes.push_back(row.name + " on " + t.engines[e].label + ": " + c.note);
        verdict += " [" + std::to_string(notes.size()) + "]";
      }
      o << "| " << row.pattern << " | " << row.layer << " | " << row.shape << " | "
        << MdCell(t.engines[e].label) << " | " << us(c.unfused_ns) << " | " << us(c.fused_ns)
        << " | ";
      if (int8) {
        auto gops = [&row](const std::vector<double>& v) {
          return v.empty() ? std::string("-") : Fixed(row.ops / Median(v), 1);
        };
        o << gops(c.unfused_ns) << " | " << gops(c.fused_ns) << " | ";
      }
      o << (s > 0 ? Fixed(s, 2) : "-") << " | " << cv << " | " << verdict << " |\n";
    }
  }
  if (!notes.empty()) {
    o << "\n";
    for (size_t i = 0; i < notes.size(); ++i) o << i + 1 << ". " << MdCell(notes[i]) << "\n";
  }
  // Which rewrites bought the speedup (a fused run that reported none ran what the unfused one
  // ran, as far as the engine tells): per engine, each distinct list with its number of rows.
  bool any = false;
  for (size_t e = 0; e < t.engines.size(); ++e) {
    std::vector<std::pair<std::string, int>> lists;
    for (const BenchRow& row : t.rows) {
      const std::string& r = row.cells[e].rewrites;
      if (r.empty()) continue;
      auto it =
          std::find_if(lists.begin(), lists.end(), [&](const auto& l) { return l.first == r; });
      if (it == lists.end()) {
        lists.push_back({r, 1});
      } else {
        ++it->second;
      }
    }
    if (lists.empty()) continue;
    if (!any)
      o << "\nRewrites the fused runs reported (per engine: the list, the rows with it):\n\n";
    any = true;
    o << "- **" << MdCell(t.engines[e].label) << "**:";
    for (size_t i = 0; i < lists.size(); ++i) {
      o << (i ? ";" : "") << " " << MdCell(lists[i].first) << " (" << lists[i].second
        << (lists[i].second == 1 ? " row)" : " rows)");
    }
    o << "\n";
  }
  return o.str();
}

// Horizontal bars, one per engine per row: the speedup, with a dashed line at 1x.
std::string BenchSvg(const BenchTable& t) {
  const int label_w = 430, plot_w = 420, bar_h = 8,
            top = 30 + 16 * static_cast<int>((t.engines.size() + 2) / 3);
  const int row_h = std::max(18, bar_h * static_cast<int>(t.engines.size()) + 6);
  double max_x = 2.0;
  for (const BenchRow& row : t.rows) {
    for (const BenchCell& c : row.cells) max_x = std::max(max_x, Speedup(c));
  }
  max_x = std::min(max_x, 10.0);
  auto x = [&](double v) { return label_w + plot_w * std::min(v, max_x) / max_x; };
  const int height = top + row_h * static_cast<int>(t.rows.size()) + 30;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label_w + plot_w + 60
    << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"10\" y=\"18\" font-size=\"14\">Fusion speedup (unfused time / fused time) per "
       "engine</text>\n";
  for (size_t e = 0; e < t.engines.size(); ++e) {
    const int lx = 10 + 280 * static_cast<int>(e % 3), ly = 26 + 16 * static_cast<int>(e / 3);
    o << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"10\" height=\"8\" fill=\""
      << kColors[e % 6] << "\"/><text x=\"" << lx + 14 << "\" y=\"" << ly + 8 << "\">"
      << XmlEscape(t.engines[e].label) << "</text>\n";
  }
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const BenchRow& row = t.rows[i];
    const int y = top + row_h * static_cast<int>(i);
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + row_h / 2 + 4 << "\" text-anchor=\"end\">"
      << XmlEscape(row.pattern + " " + row.layer + " " + row.shape) << "</text>\n";
    for (size_t e = 0; e < row.cells.size(); ++e) {
      const double s = Speedup(row.cells[e]);
      if (s <= 0) continue;
      const int by = y + 2 + bar_h * static_cast<int>(e);
      o << "<rect x=\"" << label_w << "\" y=\"" << by << "\" width=\"" << Fixed(x(s) - label_w, 1)
        << "\" height=\"" << bar_h - 1 << "\" fill=\"" << kColors[e % 6] << "\"/><text x=\""
        << Fixed(x(s) + 3, 1) << "\" y=\"" << by + bar_h - 1 << "\" font-size=\"8\">" << Fixed(s, 2)
        << "</text>\n";
    }
  }
  const double one = x(1.0);
  o << "<line x1=\"" << Fixed(one, 1) << "\" y1=\"" << top << "\" x2=\"" << Fixed(one, 1)
    << "\" y2=\"" << height - 24 << "\" stroke=\"black\" stroke-dasharray=\"3,3\"/>\n"
    << "<text x=\"" << Fixed(one, 1) << "\" y=\"" << height - 10
    << "\" text-anchor=\"middle\">1x</text>\n<text x=\"" << label_w + plot_w << "\" y=\""
    << height - 10 << "\" text-anchor=\"middle\">" << Fixed(max_x, 1) << "x</text>\n</svg>\n";
  return o.str();
}

void WriteBenchTable(const BenchTable& t, const std::string& dir) {
  auto write = [&](const char* name, const std::string& text) {
    // Inside --out: created or replaced, never written through a planted link.
    WriteFileInFolder(dir, name, text);
  };
  write("benchmarks.json", BenchJson(t).dump(2) + "\n");
  write("benchmarks.md", BenchMarkdown(t));
  write("speedup.svg", BenchSvg(t));
}

}  // namespace fusefuzz
