// The int8 rows of fusion_bench as a table (cli/bench_int8_table.h).
#include "cli/bench_int8_table.h"

#include <iomanip>
#include <map>
#include <sstream>

namespace fusefuzz {
namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}
// "µs (GOPS)", or "-" when the variant did not run.
std::string Cell(double micros, double gops) {
  if (micros <= 0) return "-";
  return Fixed(micros, micros < 100 ? 1 : 0) + " (" + Fixed(gops, 1) + ")";
}
// num_time / den_time read as "how many times faster den is": den's speedup over num.
std::string Speedup(double slower, double faster) {
  return slower > 0 && faster > 0 ? Fixed(slower / faster, 2) : "-";
}

}  // namespace

std::vector<Int8Line> Int8Table(const std::vector<Int8BenchRow>& rows) {
  std::vector<Int8Line> lines;
  std::map<std::string, size_t> index;
  for (const Int8BenchRow& row : rows) {
    std::vector<std::string> parts;
    std::stringstream ss(row.name);
    for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
    if (parts.size() != 5 || parts[0] != "BM_FusionInt8") continue;
    const std::string key = parts[1] + "/" + parts[2] + "/" + parts[3];
    auto [it, fresh] = index.emplace(key, lines.size());
    if (fresh) lines.push_back({parts[1], parts[2], parts[3]});
    Int8Line& l = lines[it->second];
    const double gops = row.ops_per_s / 1e9;
    if (parts[4] == "unfused") l.unfused = row.micros, l.unfused_gops = gops;
    if (parts[4] == "fused") l.fused = row.micros, l.fused_gops = gops;
    if (parts[4] == "float32") l.float32 = row.micros, l.float32_gops = gops;
    if (parts[4] == "onednn") l.onednn = row.micros, l.onednn_gops = gops;
  }
  return lines;
}

std::string Int8Markdown(const std::vector<Int8Line>& lines) {
  if (lines.empty()) return "";
  std::ostringstream o;
  o << "\n## Int8 (BM_FusionInt8)\n\n"
       "µs (GOPS: 2 ops per multiply-add of the conv); unfused = the conv to int32, then "
       "separate requantize, add and clamp passes; fused = one int8 kernel with the epilogue; "
       "float32 = our fused float conv; oneDNN = its u8s8 conv with the pattern's post-ops. "
       "Ratios > 1: fused is faster.\n\n";
  o << "| pattern | layer | shape | unfused µs (GOPS) | fused µs (GOPS) | float32 µs (GOPS) | "
       "oneDNN int8 µs (GOPS) | fused vs unfused | fused vs float32 | fused vs oneDNN |\n";
  o << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Int8Line& l : lines) {
    o << "| " << l.pattern << " | " << l.layer << " | " << l.shape << " | "
      << Cell(l.unfused, l.unfused_gops) << " | " << Cell(l.fused, l.fused_gops) << " | "
      << Cell(l.float32, l.float32_gops) << " | " << Cell(l.onednn, l.onednn_gops) << " | "
      << Speedup(l.unfused, l.fused) << " | " << Speedup(l.float32, l.fused) << " | "
      << Speedup(l.onednn, l.fused) << " |\n";
  }
  return o.str();
}

}  // namespace fusefuzz
