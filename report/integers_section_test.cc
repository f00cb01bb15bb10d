#include "report/integers_section.h"

#include <gtest/gtest.h>

#include "ir/json_io.h"

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
