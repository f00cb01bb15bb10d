// The multi-engine fusion benchmark of `fusefuzz bench --target` (docs/benchmarks.md): its
// measurements, and their three renderings (Google Benchmark JSON, markdown table, SVG chart).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fusefuzz {

struct BenchEngine {
  std::string label;  // column group title and name part: the target's name, made unique
  std::string spec;   // what --target said
  std::string about;  // a remark on the engine for the markdown header (may be empty)
};

// One engine on one pattern x shape row.
struct BenchCell {
  // One entry per completed repetition: the target's median and fastest run, in ns.
  std::vector<double> unfused_ns, fused_ns, unfused_min_ns, fused_min_ns;
  std::string verdict;  // "PASS", "MISMATCH", "kernel: MISMATCH", "unsupported", ...
  std::string note;     // why (an unsupported or error message), for the markdown table
  // What the first fused run reported it rewrote: its rules in order, a repeat as "rule x2";
  // "none" when it reported nothing (or the target does not report rewrites), "" when no fused
  // run answered.
  std::string rewrites;
};

struct BenchRow {
  std::string name;  // "BM_Fusion/<pattern>/<model>/<shape>"
  std::string pattern, layer, shape;
  // Int8 rows (`--quant`): 2 x the conv's multiply-adds, for GOPS (markdown columns, the JSON's
  // "OP" rate counter as bench/fusion_bench's BM_FusionInt8 rows carry it); 0 for float rows.
  double ops = 0;
  std::vector<BenchCell> cells;  // one per engine, in --target order
};

struct BenchTable {
  std::vector<BenchEngine> engines;
  std::vector<BenchRow> rows;
  int repetitions = 0, runs = 0, warmup = 0, threads = 1;
  std::string command;  // the command line, for the reader to rerun
  nlohmann::json context;
};

// Median, mean and coefficient of variation (sample stddev / mean) of `v`; 0 when empty
// (cv needs two values).
double Median(std::vector<double> v);
double CoefficientOfVariation(const std::vector<double>& v);

// Google Benchmark's JSON format: "context", and per row, engine and variant (unfused, fused)
// one "iteration" entry per repetition plus median/mean/stddev/cv aggregates.
nlohmann::json BenchJson(const BenchTable& t);
std::string BenchMarkdown(const BenchTable& t);
// "1.52, 0.98, 0.71": a context's load_avg ([1, 5, 15 min]) to 2 decimals; "?" when absent.
std::string LoadAverageText(const nlohmann::json& load_avg);
// A verdict that says the numbers are wrong ("MISMATCH", "kernel: MISMATCH"): `bench` exits 1.
bool WrongNumbers(const std::string& verdict);
std::string BenchSvg(const BenchTable& t);

// Writes benchmarks.json, benchmarks.md and speedup.svg into `dir` (InputError when it cannot).
void WriteBenchTable(const BenchTable& t, const std::string& dir);

}  // namespace fusefuzz
