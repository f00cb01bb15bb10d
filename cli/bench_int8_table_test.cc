// The int8 table of `fusefuzz bench`: rows grouped by pattern x shape, µs and GOPS per variant,
// the ratios, missing variants as "-", other rows ignored.
#include "cli/bench_int8_table.h"

#include <gtest/gtest.h>

namespace fusefuzz {
namespace {

TEST(BenchInt8Table, GroupsVariantsAndComputesRatios) {
  const std::string dw = "BM_FusionInt8/dw_relu6_requant/mobilenetv2_dw/N1_C960_H7_K3_G960/";
  const std::vector<Int8BenchRow> rows = {
      {dw + "unfused", 40, 2e10},
      {"BM_Fusion/conv_bn/resnet18_conv3_x/N1_C128_H28_K3/fused", 5, 1e9},  // float table's
      {dw + "fused", 20, 4e10},
      {dw + "float32", 15, 5.4e10},
      {dw + "onednn", 12.5, 6.4e10},
      {"BM_FusionInt8/conv_requant/resnet18_conv3_x/N1_C128_H28_K3/fused", 377, 6.14e11},
      {"BM_FusionInt8/too/few/parts", 1, 1},
  };
  const std::vector<Int8Line> lines = Int8Table(rows);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].pattern, "dw_relu6_requant");
  EXPECT_EQ(lines[0].shape, "N1_C960_H7_K3_G960");
  EXPECT_DOUBLE_EQ(lines[0].fused, 20);
  EXPECT_DOUBLE_EQ(lines[0].onednn_gops, 64);
  EXPECT_DOUBLE_EQ(lines[1].fused, 377);
  EXPECT_DOUBLE_EQ(lines[1].unfused, 0);
  const std::string md = Int8Markdown(lines);
  EXPECT_NE(md.find("| dw_relu6_requant | mobilenetv2_dw | N1_C960_H7_K3_G960 | 40.0 (20.0) | "
                    "20.0 (40.0) | 15.0 (54.0) | 12.5 (64.0) | 2.00 | 0.75 | 0.62 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| conv_requant | resnet18_conv3_x | N1_C128_H28_K3 | - | 377 (614.0) | - | "
                    "- | - | - | - |"),
            std::string::npos)
      << md;
  EXPECT_EQ(Int8Markdown({}), "");
}

}  // namespace
}  // namespace fusefuzz
