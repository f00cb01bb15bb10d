// The int8 table of `fusefuzz bench` (docs/benchmarks.md, docs/kernels.md "Int8"): the
// BM_FusionInt8/<pattern>/<layer>/<shape>/<variant> rows of bench/fusion_bench, variants
// unfused, fused, float32 and onednn, as one line per pattern x shape with µs, GOPS and the
// ratios of fused to the other three.
#pragma once

#include <string>
#include <vector>

namespace fusefuzz {

// One benchmark row as `bench` read it: run name, time in µs, counter OP (ops/s; 0 if none).
struct Int8BenchRow {
  std::string name;
  double micros = 0, ops_per_s = 0;
};

struct Int8Line {
  std::string pattern, layer, shape;
  // Microseconds and GOPS per variant; 0 = the row is missing (or failed).
  double unfused = 0, fused = 0, float32 = 0, onednn = 0;
  double unfused_gops = 0, fused_gops = 0, float32_gops = 0, onednn_gops = 0;
};

// The lines in the rows' order; rows not named BM_FusionInt8/<4 parts> are skipped.
std::vector<Int8Line> Int8Table(const std::vector<Int8BenchRow>& rows);
// A markdown section ("## Int8 ..." and its table), or "" for no lines.
std::string Int8Markdown(const std::vector<Int8Line>& lines);

}  // namespace fusefuzz
