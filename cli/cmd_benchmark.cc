// (Named cmd_benchmark.cc, not cmd_bench.cc: the layer glob excludes files ending in _bench.cc.)
// `fusefuzz bench --target T [--target T2 ...]` times the same cases through any engine
// (cli/bench_targets.cc). Without --target,
// `fusefuzz bench [--filter REGEX] [--threads N] [--out DIR] [--from-json FILE] [-- FLAGS...]` is
// a thin front over the Google Benchmark binaries built beside fusefuzz (bench/fusion_bench,
// bench/harness_bench). Runs them with JSON output into DIR, then writes DIR/benchmarks.md (fused
// vs unfused vs oneDNN table, medians when --benchmark_repetitions is given) and DIR/speedup.svg.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench_int8_table.h"
#include "cli/bench_table.h"
#include "cli/bench_targets.h"
#include "cli/cli.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/read_file.h"
#include "targets/subprocess.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct BenchArgs {
  std::string filter, out = DefaultOut("bench"), from_json;
  bool force = false;
  int threads = 1;
  std::vector<std::string> extra;
};

// The benchmark binary `name` next to this executable (<dir>/bench/name, <dir>/name), or "".
std::string FindBench(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = self.parent_path();
  for (const fs::path& p : {dir / "bench" / name, dir / name, dir.parent_path() / "bench" / name}) {
    if (fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// Names of the benchmarks of `bin` that `filter` selects (Google Benchmark's own matching).
std::vector<std::string> ListBenchmarks(const std::string& bin, const std::string& filter) {
  std::string cmd = ShellQuote(bin) + " --benchmark_list_tests=true " +
                    ShellQuote("--benchmark_filter=" + filter) + " 2>/dev/null";
  std::vector<std::string> names;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return names;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  ::pclose(p);
  return names;
}

// Debian's libbenchmark is compiled without NDEBUG, so every binary prints this warning. It
// concerns the library's own bookkeeping around the timed loop, not our kernels (built with
// the project's flags), so `bench` replaces it with one explanatory note.
constexpr char kDebugWarning[] = "Library was built as DEBUG";

// Runs one benchmark binary; returns its exit status. Its stderr is passed on, except the
// library's DEBUG warning (see kDebugWarning), which sets *saw_debug_warning.
int RunBench(const std::string& bin, const BenchArgs& a, const std::string& json_out,
             bool* saw_debug_warning) {
  const std::string err_path = json_out + ".stderr";
  // The binary and the shell's 2> open these paths themselves: whatever an earlier run (or
  // someone else) left at them in --out, a symlink included, is removed first, not followed.
  for (const std::string& p : {json_out, err_path}) {
    const fs::path f(p);
    if (!RemoveIn(f.parent_path().string(), f.filename().string())) {
      throw InputError(p, std::string("cannot remove what is there: ") + std::strerror(errno));
    }
  }
  std::string cmd = "OMP_NUM_THREADS=" + std::to_string(a.threads) + " " + ShellQuote(bin) + " " +
                    ShellQuote("--benchmark_out=" + json_out) + " --benchmark_out_format=json";
  if (!a.filter.empty()) cmd += " " + ShellQuote("--benchmark_filter=" + a.filter);
  for (const std::string& e : a.extra) cmd += " " + ShellQuote(e);
  std::cerr << "fusefuzz bench: " << cmd << "\n";
  std::fflush(nullptr);
  const int rc = std::system((cmd + " 2>" + ShellQuote(err_path)).c_str());
  std::string err_text;
  try {
    ReadFileOptions ro;
    ro.max_bytes = int64_t{64} << 20;
    ro.follow_links = false;
    err_text = ReadRegularFile(err_path, ro);
  } catch (const InputError& e) {
    std::cerr << "fusefuzz bench: " << e.what() << "\n";
  }
  std::istringstream err(err_text);
  for (std::string line; std::getline(err, line);) {
    if (line.find(kDebugWarning) != std::string::npos) {
      *saw_debug_warning = true;
      continue;
    }
    std::cerr << line << "\n";
  }
  std::error_code ec;
  fs::remove(err_path, ec);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

json ReadJson(const std::string& path) {
  // Google Benchmark's JSON of this project's benchmarks is well below a megabyte; --from-json
  // may name anything, so only a regular file of at most 64 MiB is read (ir/read_file.h).
  ReadFileOptions ro;
  ro.max_bytes = int64_t{64} << 20;
  std::stringstream buf;
  buf << ReadRegularFile(path, ro);
  // Google Benchmark writes bare NaN/inf for some aggregates (the cv of an all-zero counter),
  // which is not JSON: those values become null.
  static const std::regex kNonFinite(R"(:\s*-?(NaN|nan|inf|Infinity)\b)");
  const std::string text = std::regex_replace(buf.str(), kNonFinite, ": null");
  // A filter that matched nothing leaves an empty file: no rows.
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path, std::string("not valid JSON: ") + e.what());
  }
}

double ToMicros(double t, const std::string& unit) {
  if (unit == "ns") return t / 1e3;
  if (unit == "ms") return t * 1e3;
  if (unit == "s") return t * 1e6;
  return t;
}

struct Row {
  double micros = 0;
  std::map<std::string, double> counters;
};
using Rows = std::vector<std::pair<std::string, Row>>;

// One row per run name, in the binary's order: the median aggregate when repetitions ran, else
// the single run. Single-threaded rows are timed on CPU time (robust on a loaded machine), others
// on wall time.
Rows ReadRows(const json& doc, bool cpu_time) {
  Rows rows;
  std::map<std::string, size_t> index;
  std::map<std::string, bool> from_median;
  for (const json& b : doc.value("benchmarks", json::array())) {
    if (b.value("error_occurred", false)) continue;
    const std::string run = b.value("run_name", b.value("name", ""));
    const bool aggregate = b.value("run_type", "") == "aggregate";
    if (aggregate && b.value("aggregate_name", "") != "median") continue;
    Row r;
    r.micros =
        ToMicros(b.value(cpu_time ? "cpu_time" : "real_time", 0.0), b.value("time_unit", "ns"));
    for (const auto& [k, v] : b.items()) {
      if (v.is_number()) r.counters[k] = v.get<double>();
    }
    auto [it, fresh] = index.emplace(run, rows.size());
    if (fresh) {
      rows.emplace_back(run, r);
    } else if (aggregate || !from_median[run]) {
      rows[it->second].second = r;  // the median replaces the repetitions
    }
    if (aggregate) from_median[run] = true;
  }
  return rows;
}

struct TableLine {
  std::string pattern, layer, shape;
  double unfused = 0, fused = 0, dnnl_fused = 0, dnnl_unfused = 0;  // microseconds, 0 = none
  double fused_gflops = 0, dnnl_gflops = 0;
};

std::vector<TableLine> Table(const Rows& rows) {
  std::vector<TableLine> lines;
  std::map<std::string, size_t> index;
  for (const auto& [name, row] : rows) {
    // BM_Fusion/<pattern>/<layer>/<shape>/<variant>
    std::vector<std::string> parts;
    std::stringstream ss(name);
    for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
    if (parts.size() != 5 || parts[0] != "BM_Fusion") continue;
    const std::string key = parts[1] + "/" + parts[2] + "/" + parts[3];
    auto [it, fresh] = index.emplace(key, lines.size());
    if (fresh) lines.push_back({parts[1], parts[2], parts[3]});
    TableLine& l = lines[it->second];
    // "FLOP" is a rate in FLOP/s; files from before the rename carry "GFLOP/s".
    const double gflops = row.counters.count("FLOP")      ? row.counters.at("FLOP") / 1e9
                          : row.counters.count("GFLOP/s") ? row.counters.at("GFLOP/s")
                                                          : 0;
    if (parts[4] == "unfused") l.unfused = row.micros;
    if (parts[4] == "fused") l.fused = row.micros, l.fused_gflops = gflops;
    if (parts[4] == "onednn_fused") l.dnnl_fused = row.micros, l.dnnl_gflops = gflops;
    if (parts[4] == "onednn_unfused") l.dnnl_unfused = row.micros;
  }
  return lines;
}

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}
std::string Cell(double v, int digits) { return v > 0 ? Fixed(v, digits) : "-"; }
std::string Ratio(double num, double den) { return num > 0 && den > 0 ? Fixed(num / den, 2) : "-"; }

std::string Markdown(const std::vector<TableLine>& lines, const std::string& int8_section,
                     const json& fusion_doc, const Rows& harness, int threads) {
  std::ostringstream o;
  const json ctx = fusion_doc.value("context", json::object());
  o << "# fusefuzz benchmarks\n\n";
  o << "- date: " << ctx.value("date", "?") << ", host: " << ctx.value("host_name", "?")
    << ", CPUs: " << ctx.value("num_cpus", 0) << "\n";
  if (ctx.contains("load_avg")) {
    o << "- load average at start: " << LoadAverageText(ctx["load_avg"]) << "\n";
  }
  o << "- threads: " << threads << " (" << (threads == 1 ? "CPU time" : "wall time")
    << "), build ISA: " << ctx.value("fusefuzz_isa", "?")
    << ", oneDNN: " << ctx.value("onednn", "?") << "\n";
  o << "- malloc: " << ctx.value("fusefuzz_malloc", "?") << "\n";
  o << "- times in microseconds (median of the repetitions when there were any); speedup = "
       "unfused / fused; \"vs oneDNN\" = oneDNN fused time / our fused time (1 = parity)\n\n";
  o << "| pattern | layer | shape | unfused µs | fused µs | speedup | fused GFLOP/s | oneDNN "
       "fused µs | oneDNN unfused µs | oneDNN speedup | oneDNN GFLOP/s | vs oneDNN |\n";
  o << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const TableLine& l : lines) {
    o << "| " << l.pattern << " | " << l.layer << " | " << l.shape << " | " << Cell(l.unfused, 0)
      << " | " << Cell(l.fused, 0) << " | " << Ratio(l.unfused, l.fused) << " | "
      << Cell(l.fused_gflops, 1) << " | " << Cell(l.dnnl_fused, 0) << " | "
      << Cell(l.dnnl_unfused, 0) << " | " << Ratio(l.dnnl_unfused, l.dnnl_fused) << " | "
      << Cell(l.dnnl_gflops, 1) << " | " << Ratio(l.dnnl_fused, l.fused) << " |\n";
  }
  o << int8_section;
  if (!harness.empty()) {
    o << "\n## Harness throughput\n\n| stage | graphs/s |\n|---|---:|\n";
    for (const auto& [name, row] : harness) {
      auto it = row.counters.find("graphs");
      if (it == row.counters.end()) it = row.counters.find("graphs/s");
      if (it != row.counters.end()) o << "| " << name << " | " << Fixed(it->second, 0) << " |\n";
    }
  }
  return o.str();
}

// A horizontal bar chart: our fused speedup (blue) and oneDNN's (orange) per row, with a line
// at 1x. Plain SVG text, no plotting dependency.
std::string Svg(const std::vector<TableLine>& lines) {
  const int label_w = 430, plot_w = 420, bar_h = 7, row_h = 18, top = 40;
  double max_x = 2.0;
  for (const TableLine& l : lines) {
    if (l.fused > 0) max_x = std::max(max_x, l.unfused / l.fused);
    if (l.dnnl_fused > 0 && l.dnnl_unfused > 0)
      max_x = std::max(max_x, l.dnnl_unfused / l.dnnl_fused);
  }
  max_x = std::min(max_x, 10.0);
  auto x = [&](double v) { return label_w + plot_w * std::min(v, max_x) / max_x; };
  const int height = top + row_h * static_cast<int>(lines.size()) + 30;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label_w + plot_w + 60
    << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"10\" y=\"18\" font-size=\"14\">Fusion speedup (unfused time / fused time)"
       "</text>\n<rect x=\"10\" y=\"26\" width=\"10\" height=\"8\" fill=\"#3366cc\"/><text x=\"24\""
       " y=\"34\">fusefuzz fast kernels</text><rect x=\"170\" y=\"26\" width=\"10\" height=\"8\" "
       "fill=\"#ff9900\"/><text x=\"184\" y=\"34\">oneDNN (post-ops vs separate primitives)"
       "</text>\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const TableLine& l = lines[i];
    const int y = top + row_h * static_cast<int>(i);
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 12 << "\" text-anchor=\"end\">"
      << l.pattern << " " << l.layer << " " << l.shape << "</text>\n";
    if (l.fused > 0 && l.unfused > 0) {
      const double s = l.unfused / l.fused;
      o << "<rect x=\"" << label_w << "\" y=\"" << y + 2 << "\" width=\""
        << Fixed(x(s) - label_w, 1) << "\" height=\"" << bar_h << "\" fill=\"#3366cc\"/><text x=\""
        << Fixed(x(s) + 3, 1) << "\" y=\"" << y + 9 << "\">" << Fixed(s, 2) << "</text>\n";
    }
    if (l.dnnl_fused > 0 && l.dnnl_unfused > 0) {
      const double s = l.dnnl_unfused / l.dnnl_fused;
      o << "<rect x=\"" << label_w << "\" y=\"" << y + 2 + bar_h << "\" width=\""
        << Fixed(x(s) - label_w, 1) << "\" height=\"" << bar_h - 2 << "\" fill=\"#ff9900\"/>\n";
    }
  }
  const double one = x(1.0);
  o << "<line x1=\"" << Fixed(one, 1) << "\" y1=\"" << top << "\" x2=\"" << Fixed(one, 1)
    << "\" y2=\"" << height - 24 << "\" stroke=\"black\" stroke-dasharray=\"3,3\"/>\n";
  o << "<text x=\"" << Fixed(one, 1) << "\" y=\"" << height - 10
    << "\" text-anchor=\"middle\">1x</text>\n<text x=\"" << label_w + plot_w << "\" y=\""
    << height - 10 << "\" text-anchor=\"middle\">" << Fixed(max_x, 1) << "x</text>\n</svg>\n";
  return o.str();
}

// Inside --out: created or replaced, never written through a planted link (ir/folder_write.h).
void WriteFile(const fs::path& p, const std::string& text) {
  WriteFileInFolder(p.parent_path().string(), p.filename().string(), text);
}

int Bench(const BenchArgs& a) {
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) throw InputError(a.out, "cannot create output directory: " + ec.message());
  const fs::path out(a.out);
  std::string fusion_json = a.from_json, harness_json;
  if (fusion_json.empty()) {
    const std::string fusion = FindBench("fusion_bench");
    if (fusion.empty()) {
      std::cerr << "fusefuzz: error: bench/fusion_bench not found next to this executable "
                   "(build with -DFUSEFUZZ_BENCH=ON and Google Benchmark installed)\n";
      return 2;
    }
    // --filter selects among the rows of both binaries: a binary none of whose rows match is
    // not run (Google Benchmark would print "Failed to match any benchmarks").
    bool debug_warning = false;
    const bool filtered = !a.filter.empty();
    if (filtered && ListBenchmarks(fusion, a.filter).empty()) {
      std::cerr << "fusefuzz bench: no fusion_bench row matches --filter " << a.filter << "\n";
    } else {
      fusion_json = (out / "benchmarks.json").string();
      if (RunBench(fusion, a, fusion_json, &debug_warning) != 0) return 1;
    }
    const std::string harness = FindBench("harness_bench");
    if (!harness.empty() && (!filtered || !ListBenchmarks(harness, a.filter).empty())) {
      harness_json = (out / "harness.json").string();
      if (RunBench(harness, a, harness_json, &debug_warning) != 0) return 1;
    }
    if (fusion_json.empty() && harness_json.empty()) {
      std::cerr << "fusefuzz: error: --filter " << a.filter
                << " matches no benchmark (list them: " << fusion << " --benchmark_list_tests)\n";
      return 2;
    }
    if (debug_warning) {
      std::cerr << "fusefuzz bench: note: the benchmark library says it \"was built as DEBUG\": "
                   "Debian builds libbenchmark without NDEBUG. That affects the library's "
                   "bookkeeping outside the timed loop, not the kernels measured here.\n";
    }
  } else if (fs::exists(fs::path(fusion_json).parent_path() / "harness.json")) {
    harness_json = (fs::path(fusion_json).parent_path() / "harness.json").string();
  }
  const json doc = fusion_json.empty() ? json::object() : ReadJson(fusion_json);
  const Rows rows = ReadRows(doc, a.threads == 1);
  const std::vector<TableLine> lines = Table(rows);
  std::vector<Int8BenchRow> int8_rows;
  for (const auto& [name, row] : rows) {
    const auto op = row.counters.find("OP");
    int8_rows.push_back({name, row.micros, op == row.counters.end() ? 0 : op->second});
  }
  const std::vector<Int8Line> int8_lines = Int8Table(int8_rows);
  Rows harness;
  if (!harness_json.empty()) harness = ReadRows(ReadJson(harness_json), a.threads == 1);
  WriteFile(out / "benchmarks.md",
            Markdown(lines, Int8Markdown(int8_lines), doc, harness, a.threads));
  WriteFile(out / "speedup.svg", Svg(lines));
  std::cout << "wrote " << (out / "benchmarks.md").string() << " and "
            << (out / "speedup.svg").string() << " (" << lines.size() << " float and "
            << int8_lines.size() << " int8 pattern rows)\n";
  return 0;
}

}  // namespace

void RegisterBench(Cli& cli) {
  auto* cmd = cli.app.add_subcommand(
      "bench",
      "Time fused vs unfused: our kernels and oneDNN (Google Benchmark binaries), or any "
      "engines with --target; write a table and a speedup chart");
  auto a = std::make_shared<BenchArgs>();
  auto t = std::make_shared<TargetBenchArgs>();
  cmd->add_option("--filter", a->filter,
                  "regex over benchmark names (--benchmark_filter); with --target, searched in "
                  "BM_Fusion/<pattern>/<layer>/<shape> (--quant: BM_FusionInt8/...)");
  cmd->add_option("--threads", a->threads, "threads for our kernels and oneDNN (or the targets)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--out", a->out, "output folder (refused when not empty, unless --force)")
      ->capture_default_str();
  cmd->add_flag("--force", a->force,
                "write into a non-empty --out, replacing the files a bench writes there");
  auto* from = cmd->add_option("--from-json", a->from_json,
                               "do not run: tabulate an existing fusion_bench JSON output");
  auto* extra =
      cmd->add_option("extra", a->extra, "after --: flags passed to the benchmark binaries");
  auto* target = cmd->add_option(
      "--target", t->targets,
      "time through this engine (embedded, exec:CMD with the protocol "
      "capability bench, onednn); repeat for several (one table line per case and engine)");
  target->excludes(from)->excludes(extra);
  cmd->add_option("--repetitions", t->repetitions, "with --target: timing requests per variant")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--runs", t->runs, "with --target: timed runs per request")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", t->warmup, "with --target: untimed runs per request")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--timeout", t->timeout, "with --target: seconds per request")
      ->check(kPositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--tiny", t->tiny, "with --target: layers 16x narrower and 4x smaller (smoke)");
  cmd->add_flag("--quant", t->quant,
                "with --target: the int8 rows instead of the float ones: the int8 patterns as "
                "quantized (QDQ) graphs, as fuzz --quant sends quantized graphs")
      ->needs(target);
  auto act = std::make_shared<std::string>("uint8");
  cmd->add_option("--quant-activations", *act,
                  "with --quant: the activations' type, uint8 (ONNX Runtime's and PyTorch's "
                  "default) or int8 (TensorFlow Lite's; XNNPACK's per-channel int8 conv)")
      ->check(CLI::IsMember({"uint8", "int8"}))
      ->capture_default_str();
  cmd->callback([a, t, act, &cli] {
    ExitOnInterrupt();
    PrepareOutFolder(a->out, a->force, a->from_json, "bench");
    if (t->targets.empty()) {
      cli.exit_code = Bench(*a);
      return;
    }
    if (*act != "uint8" && !t->quant) {
      throw InputError("--quant-activations", "applies to the int8 rows only: add --quant");
    }
    t->quant_activations = *QuantTypeFromName(*act);
    t->filter = a->filter;
    t->out = a->out;
    t->threads = a->threads;
    t->command_line = cli.command_line;
    cli.exit_code = BenchTargets(*t);
  });
}

}  // namespace fusefuzz
