#include "report/integers_section.h"

#include <gtest/gtest.h>

#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

// x[1,2,1,2] -> QuantizeLinear(s = 0.5, z = 10) -> y; "after" quantizes with z = 12 (a wrong
// zero point: every element 2 steps off).
Graph QGraph(int64_t z) {
  return ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,2,1,2]}],
    "nodes":[{"name":"q","op":"QuantizeLinear","inputs":["x"],"outputs":["y"],
      "quant":{"y":{"type":"uint8","scale":[0.5],"zero_point":[)" +
                    std::to_string(z) + R"(]}}}],
    "outputs":["y"]})");
}

TEST(IntegersSection, ShowsTAdmittedAfterAndExcessPerChannel) {
  Repro r;
  r.graph = QGraph(10);
  r.inputs["x"] = Tensor({1, 2, 1, 2}, {1.0f, 2.0f, -1.0f, 0.25f});
  r.worst.output = "y";
  r.worst.on_grid = true;
  const Graph after = QGraph(12);
  const std::string md = IntegersSection(r, &after);
  EXPECT_NE(md.find("## Integers of `y`"), std::string::npos) << md;
  // Channel 0: x = 1, 2 -> t = 12, 14; after 14, 16: both 2 steps off (the first is shown).
  EXPECT_NE(md.find("| 0 | 2 | 2 | (0, 0, 0, 0) | 12 | 0 | 12 | 14 | 2 |"), std::string::npos)
      << md;
  // Channel 1: x = -1, 0.25 -> t = 8, 10.5; after 10, 12.
  EXPECT_NE(md.find("| 1 | 2 | 2 | (0, 1, 0, 0) | 8 | 0 | 8 | 10 | 2 |"), std::string::npos) << md;
  // Without the after graph: the reference only.
  EXPECT_EQ(IntegersSection(r, nullptr).find("after rewrite |"), std::string::npos);
}

// An external target reports no graph: its own answer is compared, element by element, so the
// worst element shown is the one that fails, not the first.
TEST(IntegersSection, WithoutAnAfterGraphTheTargetsAnswerIsCompared) {
  Repro r;
  r.graph = QGraph(10);
  r.inputs["x"] = Tensor({1, 2, 1, 2}, {1.0f, 2.0f, -1.0f, 0.25f});
  r.worst.output = "y";
  r.worst.on_grid = true;
  // t = 12, 14 | 8, 10.5: the target gets channel 0 right and the last element 3 steps off.
  const Tensor answered({1, 2, 1, 2}, {12.0f, 14.0f, 8.0f, 13.0f});
  const std::string md = IntegersSection(r, nullptr, &answered);
  EXPECT_NE(md.find("| target | excess |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0 | 2 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 2 | 1 | (0, 1, 0, 1) | 10.5 | 0 | [10, 11] | 13 | 2 |"),
            std::string::npos)
      << md;
  // An answer of another size is not compared.
  const Tensor wrong({1, 1, 1, 2}, {12.0f, 14.0f});
  EXPECT_EQ(IntegersSection(r, nullptr, &wrong).find("| target |"), std::string::npos);
}

// One "excess" for one element: the oracle's detail and the table say the same number (issue 45,
// item 2: they said 0.25 and 1). t = 12 answered 14 is 2 steps from the admitted integer 12.
TEST(IntegersSection, TheTableAndTheOracleGiveOneExcess) {
  Repro r;
  r.graph = QGraph(10);
  r.inputs["x"] = Tensor({1, 2, 1, 2}, {1.0f, 2.0f, -1.0f, 0.25f});
  r.worst.output = "y";
  r.worst.on_grid = true;
  const Tensor answered({1, 2, 1, 2}, {14.0f, 14.0f, 8.0f, 10.0f});
  OracleOptions o;
  o.kind = OracleKind::kGrid;
  const OracleResult judged =
      Compare(r.graph, RunReference(r.graph, r.inputs), {{"y", answered}}, o);
  EXPECT_EQ(judged.grid.excess, 2) << judged.detail;
  const std::string md = IntegersSection(r, nullptr, &answered);
  EXPECT_NE(md.find("| 0 | 2 | 1 | (0, 0, 0, 0) | 12 | 0 | 12 | 14 | 2 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("outside the admitted integers, the distance to the nearer one"),
            std::string::npos)
      << md;
}

// Clamp bounds before a Q on the grid: s·(q − z), Q(b), and the half-step margin (item 3).
TEST(ClampBoundsSection, BoundsAsGridPositionsWithTheHalfStepMargin) {
  const Graph g = ParseGraph(R"({"format":"fusefuzz-graph","version":1,
    "inputs":[{"name":"x","shape":[1,1,1,2]}],
    "nodes":[{"name":"r6","op":"Relu6","inputs":["x"],"outputs":["a"]},
      {"name":"q","op":"QuantizeLinear","inputs":["a"],"outputs":["y"],
      "quant":{"y":{"type":"uint8","scale":[0.0234375],"zero_point":[0]}}}],
    "outputs":["y"]})");
  const std::string md = ClampBoundsSection(g);
  // 6 / 0.0234375 = 256: Q(6) = 255 = qmax, 1.5 steps past the half step 254.5.
  EXPECT_NE(md.find("| `r6` | max | 6 | 0.0234375·(256 − 0) | 255 | 255 | 1.5 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `r6` | min | 0 | 0.0234375·(0 − 0) | 0 | 0 | 0.5 |"), std::string::npos)
      << md;
  EXPECT_EQ(ClampBoundsSection(QGraph(10)), "");
}

TEST(IntegersSection, NothingForAFloatOutput) {
  Repro r;
  r.graph = QGraph(10);
  r.inputs["x"] = Tensor({1, 2, 1, 2}, {1.0f, 2.0f, -1.0f, 0.25f});
  r.worst.output = "y";
  r.worst.on_grid = false;
  EXPECT_EQ(IntegersSection(r, nullptr), "");
}

}  // namespace
}  // namespace fusefuzz
