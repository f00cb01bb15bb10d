// The statistics and renderings of `fusefuzz bench --target` (cli/bench_table.h) on a table built
// by hand: medians, coefficient of variation, Google Benchmark JSON entries, markdown cells.
#include "cli/bench_table.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fusefuzz {
namespace {

BenchTable Table() {
  BenchTable t;
  t.engines = {{"eng-a", "embedded", ""}, {"eng-b", "exec:b", "a remark"}};
  t.repetitions = 3;
  t.runs = 4;
  t.warmup = 1;
  t.command = "fusefuzz bench --target embedded";
  t.context = {{"date", "today"}, {"host_name", "h"}, {"num_cpus", 2}};
  BenchRow row;
  row.name = "BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3";
  row.pattern = "conv_bn";
  row.layer = "resnet18_conv3_x";
  row.shape = "N1_C128_H28_K3";
  BenchCell a;
  a.unfused_ns = {300, 100, 200};
  a.unfused_min_ns = {290, 90, 190};
  a.fused_ns = {100, 50, 60};
  a.fused_min_ns = {90, 45, 55};
  a.verdict = "PASS";
  BenchCell b;
  b.verdict = "UNSUPPORTED";
  b.note = "grouped | conv";
  row.cells = {a, b};
  t.rows.push_back(row);
  return t;
}

TEST(BenchTable, MedianAndCoefficientOfVariation) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({}), 0);
  // mean 200, sample stddev 100
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({100, 200, 300}), 0.5);
  EXPECT_EQ(CoefficientOfVariation({7}), 0);
}

TEST(BenchTable, GoogleBenchmarkJson) {
  const nlohmann::json j = BenchJson(Table());
  const auto& b = j.at("benchmarks");
  // eng-a: 2 variants x (3 iterations + 4 aggregates); eng-b measured nothing.
  ASSERT_EQ(b.size(), 14u);
  EXPECT_EQ(b[0]["name"], "BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3/eng-a/unfused");
  EXPECT_EQ(b[0]["run_type"], "iteration");
  EXPECT_EQ(b[0]["real_time"], 300);
  EXPECT_EQ(b[0]["min_ns"], 290);
  EXPECT_EQ(b[0]["iterations"], 4);
  EXPECT_EQ(b[0]["label"], "PASS");
  EXPECT_EQ(b[4]["name"], "BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3/eng-a/unfused_median");
  EXPECT_EQ(b[4]["real_time"], 200);
  EXPECT_EQ(b[6]["aggregate_name"], "cv");
  EXPECT_EQ(b[6]["aggregate_unit"], "percentage");
  EXPECT_DOUBLE_EQ(b[6]["real_time"].get<double>(), 0.5);
  EXPECT_EQ(b[7]["run_name"], "BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3/eng-a/fused");
  EXPECT_EQ(
      j["context"]["fusefuzz_verdicts"]["BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3/eng-b"],
      "UNSUPPORTED");
  EXPECT_EQ(j["context"]["fusefuzz_runs"], 4);
}

TEST(BenchTable, MarkdownRowHasSpeedupVerdictAndEscapedNote) {
  const std::string md = BenchMarkdown(Table());
  // unfused median 200 ns = 0.2 µs, fused 60 ns; speedup 3.33; cv 50.0 / 36.1 (%).
  // One line per case and engine: the same 10 columns for any number of engines.
  EXPECT_NE(md.find("| pattern | layer | shape | engine | unfused µs | fused µs | speedup | cv % "
                    "| verdict |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| conv_bn | resnet18_conv3_x | N1_C128_H28_K3 | eng-a | 0.2 | 0.1 | 3.33 | 50.0 / "),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| conv_bn | resnet18_conv3_x | N1_C128_H28_K3 | eng-b | - | - | - | - | "
                    "UNSUPPORTED [1] |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("1. BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3 on eng-b: grouped \\| conv"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("`exec:b`; a remark"), std::string::npos);
  const std::string svg = BenchSvg(Table());
  EXPECT_NE(svg.find(">3.33</text>"), std::string::npos) << svg;
}

// An int8 row (ops > 0): GOPS columns and the JSON's OP rate; the fused runs' rewrites listed
// per engine, each distinct list with its row count; float tables have neither GOPS nor OP.
TEST(BenchTable, Int8RowsHaveGopsAndRewrites) {
  BenchTable t = Table();
  EXPECT_EQ(BenchMarkdown(t).find("GOPS"), std::string::npos);
  EXPECT_FALSE(BenchJson(t)["benchmarks"][0].contains("OP"));
  BenchRow row = t.rows[0];
  row.name = "BM_FusionInt8/conv_requant/resnet18_conv3_x/N1_C128_H28_K3";
  row.pattern = "conv_requant";
  row.ops = 1000;  // over a median of 200 ns unfused, 60 ns fused: 5 and 16.7 GOPS
  row.cells[0].rewrites = "qdq-conv-fuse";
  BenchRow none = row;
  none.cells[0].rewrites = "none";
  t.rows = {row, none, row};
  const std::string md = BenchMarkdown(t);
  EXPECT_EQ(md.rfind("# fusefuzz bench --quant: int8", 0), 0u) << md;
  EXPECT_NE(md.find("| engine | unfused µs | fused µs | unfused GOPS | fused GOPS | speedup |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| N1_C128_H28_K3 | eng-a | 0.2 | 0.1 | 5.0 | 16.7 | 3.33 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- **eng-a**: qdq-conv-fuse (2 rows); none (1 row)\n"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("- **eng-b**"), std::string::npos) << md;  // it answered nothing
  const nlohmann::json j = BenchJson(t);
  const auto& b = j.at("benchmarks");
  // Row 2: eng-a's first unfused iteration (300 ns) and its median (200 ns), then cv (no OP).
  EXPECT_DOUBLE_EQ(b[14]["OP"].get<double>(), 1000 / 300e-9);
  EXPECT_DOUBLE_EQ(b[18]["OP"].get<double>(), 1000 / 200e-9);
  EXPECT_FALSE(b[20].contains("OP"));
  EXPECT_EQ(j["context"]["fusefuzz_rewrites"]
             ["BM_FusionInt8/conv_requant/resnet18_conv3_x/N1_C128_H28_K3/eng-a"],
            "qdq-conv-fuse");  // the last row of that name
}

// The load average to 2 decimals, not raw floats; wrong numbers are what makes bench exit 1
// (issue 45, item 11).
TEST(BenchTable, LoadAverageRoundedAndWrongNumbersNamed) {
  EXPECT_EQ(LoadAverageText(nlohmann::json::array({1.5234, 0.98, 0.7})),
            "1.52, 0.98, 0.70 (1, 5, 15 min)");
  EXPECT_EQ(LoadAverageText(nlohmann::json()), "?");
  EXPECT_TRUE(WrongNumbers("MISMATCH"));
  EXPECT_TRUE(WrongNumbers("kernel: MISMATCH"));
  EXPECT_FALSE(WrongNumbers("PASS"));
  EXPECT_FALSE(WrongNumbers("not checked"));
  EXPECT_FALSE(WrongNumbers("UNSUPPORTED"));
}

}  // namespace
}  // namespace fusefuzz
