// The fast int8 convolution bit-exact against QConvLoops at every ISA level compiled in and
// runnable, 1 and 3 threads, over edge geometries (1x1 planes, channel counts off the vector
// width, odd widths, strides, dilation, asymmetric pads, groups, depthwise multipliers) times
// both storage types of x, y and the residual, zero points at both ends of their type, and
// values at the type limits (x in {0, 255} / {-128, 127}, weights in {-128, 127}: the products
// a saturating vpmaddubsw would clip) with multipliers that saturate the output and hit ties.
#include "kernels/fast/int8/qconv.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/error.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/fast_test_util.h"
#include "kernels/fast/int8/qconv_fast.h"

namespace fusefuzz::int8 {
namespace {

struct Geo {
  const char* name;
  int64_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
};

const Geo kGeos[] = {
    {"c3_3x3_pad1", 1, 3, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"c17_1x1", 1, 17, 5, 6, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"c8_3x3_on_1x1", 1, 8, 1, 1, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"c5_3x3_s2_asym", 2, 5, 9, 8, 6, 3, 3, 2, 2, 1, 1, 2, 1, 0, 3, 1},
    {"c6_3x3_d2", 1, 6, 11, 9, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {"c4_3x2_s23_d12", 1, 4, 10, 13, 3, 3, 2, 2, 3, 1, 2, 1, 0, 2, 1, 1},
    {"groups2", 2, 6, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"groups3_1x1", 1, 9, 5, 6, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3},
    {"c32_m20_13x13", 1, 32, 13, 13, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"c70_k27_5x5", 1, 70, 5, 5, 3, 3, 3, 1, 1, 1, 1, 0, 1, 2, 0, 1},
    {"c3_odd_width53", 1, 3, 4, 53, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"pointwise_s2", 1, 7, 9, 9, 5, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    // Whole tiles requantized in registers (1x1 and im2col positions map one to one).
    {"c20_1x1_m16_10x10", 2, 20, 10, 10, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"c9_3x3_s2_m9_21x21", 1, 9, 21, 21, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {"depthwise", 2, 5, 7, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
    {"depthwise_mult2", 1, 3, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
    {"depthwise_5x5_s2_d2_mult2", 1, 4, 13, 11, 8, 5, 5, 2, 2, 2, 1, 3, 2, 1, 4, 4},
    {"depthwise_on_1x1", 1, 6, 1, 1, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},
    {"depthwise_wide37", 1, 4, 9, 37, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {"depthwise_s2_odd", 1, 3, 10, 19, 3, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 3},
    // The channel-blocked kernel (AVX-512): channel counts off its 16-channel blocks, 7x7 and
    // 56x56 planes, odd widths, stride 2, asymmetric pads, multipliers, 5x5 and run-time sizes.
    {"dw_c20_7x7", 1, 20, 7, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 20},
    {"dw_c17_56x56", 1, 17, 56, 56, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 17},
    {"dw_c33_s2_odd23", 2, 33, 15, 23, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 33},
    {"dw_c18_mult2_asym", 1, 18, 9, 11, 36, 3, 3, 1, 1, 1, 1, 0, 2, 2, 0, 18},
    {"dw_c16_5x5", 1, 16, 12, 13, 16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 16},
    {"dw_c21_7x7_d2", 1, 21, 15, 14, 21, 7, 7, 1, 1, 2, 2, 3, 6, 3, 6, 21},
    {"dw_c19_1x1_s2", 1, 19, 8, 9, 19, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 19},
    {"dw_c31_s2_5x5_pad0", 1, 31, 17, 18, 31, 5, 5, 2, 2, 1, 1, 0, 0, 0, 0, 31},
    // The tap-group kernel (AVX-512 with VNNI and VBMI; rows of at least 14 outputs): a 4-wide
    // row (one full group), 5-wide (two groups), 9-wide (three, the run-time-size path), 7-wide
    // with dilation 2, stride 4 and dilation 16 (the index reaching byte 63 of the load),
    // stride 5 (past one load: the channel-blocked kernel), rows of 75 outputs (whole steps of 64
    // and a tail), multiplier 3, odd widths, channel counts off 16.
    {"dw_c18_1x4_s4", 1, 18, 6, 140, 18, 1, 4, 1, 4, 1, 1, 0, 1, 0, 2, 18},
    {"dw_c16_5x5_w34", 1, 16, 9, 34, 16, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 16},
    {"dw_c20_9x9", 1, 20, 12, 40, 20, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, 20},
    {"dw_c5_7x7_d2_w41", 2, 5, 10, 41, 5, 7, 7, 1, 1, 2, 2, 3, 6, 3, 6, 5},
    {"dw_c16_3x3_d16", 1, 16, 40, 40, 16, 3, 3, 1, 1, 16, 16, 16, 16, 16, 16, 16},
    {"dw_c17_s5", 1, 17, 11, 170, 17, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 17},
    {"dw_c19_s2_w150", 1, 19, 5, 150, 19, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 19},
    {"dw_c7_mult3_w33", 1, 7, 8, 33, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7},
    // The pair-word kernel (AVX2, qconv_dw_avx2.cc): the MobileNetV2 planes 56/28/14/7 at odd
    // channel counts, stride 1 and 2 (column phases), multiplier 2, rows of whole 32-byte steps
    // (56), of 8-lane vectors with junk lanes (7, 14, 12), a last step repeating vectors (7x7:
    // 7 vectors), fewer than 4 vectors (2x3), one-wide rows (several vectors past the plane's
    // end in its last step), even and odd kernel widths (1x4: pairs only; 1x5, 7x7: the
    // run-time pair count), stride_w 3 and 4, asymmetric and zero pads.
    {"dw2_c9_56x56", 1, 9, 56, 56, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 9},
    {"dw2_c11_s2_28", 1, 11, 28, 28, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 11},
    {"dw2_c13_14x14", 2, 13, 14, 14, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 13},
    {"dw2_c15_7x7_mult2", 1, 15, 7, 7, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 15},
    {"dw2_c5_s2_7x7", 1, 5, 7, 7, 5, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 5},
    {"dw2_c3_2x3", 1, 3, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
    {"dw2_c4_w1", 1, 4, 9, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {"dw2_c5_12x12_pad0", 1, 5, 12, 14, 5, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 5},
    {"dw2_c6_1x4", 1, 6, 5, 21, 6, 1, 4, 1, 1, 1, 1, 0, 2, 0, 1, 6},
    {"dw2_c7_1x5_s3", 1, 7, 6, 29, 7, 1, 5, 2, 3, 1, 1, 0, 2, 1, 2, 7},
    {"dw2_c3_7x7_s4", 1, 3, 19, 30, 6, 7, 7, 1, 4, 1, 1, 3, 3, 3, 3, 3},
    {"dw2_c17_7x7_k7", 1, 17, 7, 7, 17, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 17},
    // The one-register kernel (AVX-512 with VNNI and VBMI, qconv_dw_regs.cc): a 63-byte input
    // plane (the most it takes: byte 63 is the zero point), a 64-byte output plane, a 1x4 row
    // with dilation 2 (the 4th tap byte used), a 5x3 kernel strided with multiplier 2 (the
    // run-time kernel height), asymmetric pads on 7x7, a 7x7 kernel height with dilation,
    // and more channels than one task's 64 planes.
    {"dwr_c23_9x7", 2, 23, 9, 7, 23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 23},
    {"dwr_c18_out64", 1, 18, 7, 7, 18, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 18},
    {"dwr_c9_1x4_d2", 1, 9, 6, 10, 9, 1, 4, 1, 1, 1, 2, 0, 3, 0, 3, 9},
    {"dwr_c7_5x3_s2_mult2", 1, 7, 7, 9, 14, 5, 3, 2, 2, 1, 1, 2, 1, 2, 1, 7},
    {"dwr_c70_7x7_asym", 1, 70, 7, 7, 70, 3, 3, 1, 1, 1, 1, 0, 2, 2, 0, 70},
    {"dwr_c5_7x1_d2", 1, 5, 8, 6, 5, 7, 1, 1, 1, 2, 1, 6, 0, 6, 0, 5},
    // The tap-group kernel's shared border columns (rows of w + max(pl, pr) bytes where that
    // saves a block): MobileNetV2's 28x28 with multiplier 2, asymmetric pads both ways.
    {"dws_c19_28x28_mult2", 1, 19, 28, 28, 38, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19},
    {"dws_c9_w19_pl1_pr2", 1, 9, 12, 19, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2, 9},
    {"dws_c9_w30_k4_pl2_pr1", 2, 9, 12, 30, 9, 3, 4, 1, 1, 1, 1, 1, 2, 1, 1, 9},
    {"dws_c5_2x20_one_group", 1, 5, 2, 20, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},
    // The output-channel-lane GEMM (qconv_gemm_oc.cc, VNNI + VBMI, where it computes fewer
    // lanes): 7-wide rows with a ragged last channel tile (104 = 3 * 32 + 8), dilation 2 on
    // 14-wide rows, two groups on rows of 14 + 7, a 5x5 kernel on rows of two 14-chunks.
    {"oc_c20_m104_7x7", 1, 20, 7, 7, 104, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"oc_c9_m64_w14_d2", 2, 9, 6, 14, 64, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {"oc_c16_m128_w21_groups2", 1, 16, 9, 21, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"oc_c6_m64_w28_5x5", 1, 6, 8, 28, 64, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
};

// One of the variants every geometry runs: storage types, zero points, residual, values.
struct Variant {
  QStorage x_type, y_type;
  bool residual;
  QStorage r_type;
  bool extremes;  // values only at the type limits (and 0), weights -128 / 127 / 0
  int zp_end;     // 0: zero points at the low end of each type, 1: high end, 2: middle
};

std::string Describe(const Variant& v) {
  auto t = [](QStorage s) { return s == QStorage::kUint8 ? "u8" : "s8"; };
  return std::string("x ") + t(v.x_type) + " y " + t(v.y_type) +
         (v.residual ? std::string(" residual ") + t(v.r_type) : std::string(" no residual")) +
         (v.extremes ? " extremes" : " random") + " zp end " + std::to_string(v.zp_end);
}

std::vector<Variant> Variants() {
  std::vector<Variant> out;
  const QStorage both[] = {QStorage::kUint8, QStorage::kInt8};
  int k = 0;
  for (QStorage x : both) {
    for (QStorage y : both) {
      for (int r = 0; r < 3; ++r) {
        for (bool ext : {false, true}) {
          out.push_back({x, y, r > 0, r == 2 ? QStorage::kInt8 : QStorage::kUint8, ext, k % 3});
          ++k;
        }
      }
    }
  }
  return out;
}

int32_t ZeroPoint(QStorage t, int end) {
  return end == 0 ? QMin(t) : end == 1 ? QMax(t) : (QMin(t) + QMax(t)) / 2;
}

struct Data {
  std::vector<uint8_t> x, r;
  std::vector<int8_t> w;
  std::vector<int32_t> bias;
  std::vector<float> mult;
};

uint8_t Byte(fast_test::Rng& rng, QStorage t, bool extremes) {
  if (extremes) {
    const int32_t pick[] = {QMin(t), QMax(t), QMax(t), QMin(t), 0};
    return static_cast<uint8_t>(pick[rng.Next() % 5]);
  }
  return static_cast<uint8_t>(rng.Next() & 0xFF);
}

QConvProblem Make(const Geo& g, const Variant& v, uint64_t seed, Data& d) {
  QConvProblem p;
  p.n = g.n, p.c = g.c, p.h = g.h, p.w = g.w, p.m = g.m, p.kh = g.kh, p.kw = g.kw;
  p.stride_h = g.sh, p.stride_w = g.sw, p.dilation_h = g.dh, p.dilation_w = g.dw;
  p.pad_top = g.pt, p.pad_left = g.pl, p.group = g.group;
  p.oh = (g.h + g.pt + g.pb - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  p.ow = (g.w + g.pl + g.pr - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  fast_test::Rng rng(seed);
  p.x_type = v.x_type;
  p.x_zero_point = ZeroPoint(v.x_type, v.zp_end);
  d.x.resize(static_cast<size_t>(g.n * g.c * g.h * g.w));
  for (uint8_t& b : d.x) b = Byte(rng, v.x_type, v.extremes);
  const int64_t taps = g.c / g.group * g.kh * g.kw;
  d.w.resize(static_cast<size_t>(g.m * taps));
  for (int8_t& w : d.w) {
    const int8_t pick[] = {-128, 127, -128, 0};
    w = v.extremes ? pick[rng.Next() % 4] : static_cast<int8_t>(rng.Next() & 0xFF);
  }
  d.bias.resize(static_cast<size_t>(g.m));
  for (int32_t& b : d.bias) b = static_cast<int32_t>(rng.Next() % 100001) - 50000;
  // Per channel: ties (0.5, 0.25 on integers), multipliers that saturate, and small ones; and
  // ones that take acc * multiplier past the int32 range (vcvtps2dq's "indefinite" result),
  // to infinity and to NaN (0 * inf), which the loops' clamp sends to y_max / y_min.
  d.mult.resize(static_cast<size_t>(g.m));
  for (size_t i = 0; i < d.mult.size(); ++i) {
    const float pick[] = {0.5f,
                          0.25f,
                          1.0f / 64,
                          3e-5f,
                          1.7e-4f,
                          0.0071f,
                          1.0f,
                          2e-3f,
                          6e4f,
                          3e38f,
                          std::numeric_limits<float>::infinity()};
    d.mult[i] = pick[(i + seed) % 11];
  }
  p.x = d.x.data();
  p.weights = d.w.data();
  p.bias = seed % 4 == 3 ? nullptr : d.bias.data();
  p.multiplier = d.mult.data();
  const size_t out = static_cast<size_t>(g.n * g.m * p.oh * p.ow);
  if (v.residual) {
    d.r.resize(out);
    for (uint8_t& b : d.r) b = Byte(rng, v.r_type, v.extremes);
    p.residual = d.r.data();
    p.residual_type = v.r_type;
    p.residual_zero_point = ZeroPoint(v.r_type, (v.zp_end + 1) % 3);
    p.residual_multiplier = (seed % 2) ? 0.5f : 0.37f;
  }
  p.y_type = v.y_type;
  p.y_zero_point = ZeroPoint(v.y_type, (v.zp_end + 2) % 3);
  p.y_min = QMin(v.y_type);
  p.y_max = QMax(v.y_type);
  if (seed % 3 == 1) p.y_min = p.y_zero_point;  // ReLU
  if (seed % 3 == 2) {                          // ReLU6-like clamp above the zero point
    p.y_min = p.y_zero_point;
    p.y_max = std::min(QMax(v.y_type), p.y_zero_point + 40);
  }
  return p;
}

// The first differing element, or -1.
int64_t FirstDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(QConvFast, BitExactWithLoopsAtEveryLevel) {
  const std::vector<Variant> variants = Variants();
  int checked = 0;
  for (const Geo& g : kGeos) {
    for (size_t vi = 0; vi < variants.size(); ++vi) {
      const Variant& v = variants[vi];
      Data d;
      QConvProblem p = Make(g, v, 17 * vi + 5, d);
      const size_t out = static_cast<size_t>(p.n * p.m * p.oh * p.ow);
      std::vector<uint8_t> want(out, 0xA5), got(out);
      p.y = want.data();
      QConvLoops(p);
      for (FastIsa isa : AvailableFastIsas()) {
        for (int threads : {1, 3}) {
          std::fill(got.begin(), got.end(), 0x5A);
          p.y = got.data();
          QConv(p, threads, isa);
          const int64_t at = FirstDiff(want, got);
          ASSERT_EQ(at, -1) << g.name << ", " << Describe(v) << ", " << FastIsaName(isa) << ", "
                            << threads << " threads: y[" << at << "] = " << int{got[at]}
                            << ", loops say " << int{want[at]};
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// The ResNet and MobileNet shapes the benchmark times, once each at every level.
TEST(QConvFast, BenchShapesBitExact) {
  const Geo shapes[] = {
      {"resnet18_conv5_x", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {"resnet18_conv3_x", 1, 128, 28, 28, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {"mobilenetv2_dw", 1, 144, 56, 56, 144, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144},
      {"mobilenetv2_dw7", 1, 960, 7, 7, 960, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 960},
      {"mobilenetv2_pw", 1, 96, 14, 14, 576, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
  };
  const Variant v{QStorage::kUint8, QStorage::kUint8, true, QStorage::kUint8, false, 2};
  for (const Geo& g : shapes) {
    Data d;
    QConvProblem p = Make(g, v, 11, d);
    std::vector<float> mult(d.mult.size(), 1.0f / 4096);  // outputs mostly in range
    p.multiplier = mult.data();
    const size_t out = static_cast<size_t>(p.m * p.oh * p.ow);
    std::vector<uint8_t> want(out), got(out);
    p.y = want.data();
    QConvLoops(p);
    for (FastIsa isa : AvailableFastIsas()) {
      p.y = got.data();
      QConv(p, 1, isa);
      const int64_t at = FirstDiff(want, got);
      ASSERT_EQ(at, -1) << g.name << " at " << FastIsaName(isa) << ": y[" << at << "]";
    }
  }
}

// The unfused pipeline: the int32 accumulator (y_int32), then QRequantize as its own pass. Each
// step bit-exact with its loops at every level, and the two passes give the fused bytes.
TEST(QConvFast, Int32OutputAndSeparateRequantizeMatchFused) {
  // 21, 31, 34: the tap-group kernel's three paths (interleaved, vpermb on the grid, rows);
  // 36 on: the AVX2 pair-word kernel's (int32 stores whole, in part at a plane's end); 48 on:
  // the one-register kernel's (a 64-output plane, strided, a task's last planes); 54 on: the
  // tap-group kernel's shared border columns; 58 on: the output-channel-lane GEMM's.
  for (size_t gi :
       {size_t{0},  size_t{3},  size_t{9},  size_t{12}, size_t{14}, size_t{20}, size_t{21},
        size_t{22}, size_t{23}, size_t{31}, size_t{34}, size_t{36}, size_t{37}, size_t{38},
        size_t{39}, size_t{41}, size_t{42}, size_t{44}, size_t{45}, size_t{46}, size_t{47},
        size_t{48}, size_t{49}, size_t{51}, size_t{52}, size_t{54}, size_t{55}, size_t{56},
        size_t{58}, size_t{59}, size_t{60}, size_t{61}}) {
    const Geo& g = kGeos[gi];
    const Variant v{QStorage::kInt8, QStorage::kUint8, true, QStorage::kInt8, gi % 2 == 1, 1};
    Data d;
    QConvProblem p = Make(g, v, 40 + gi, d);
    const size_t out = static_cast<size_t>(p.n * p.m * p.oh * p.ow);
    std::vector<uint8_t> fused(out), want(out), got(out);
    std::vector<int32_t> acc_want(out), acc_got(out);
    p.y = fused.data();
    QConvLoops(p);
    p.y_int32 = acc_want.data();
    QConvLoops(p);
    p.y = want.data();
    QRequantizeLoops(p, acc_want.data());
    EXPECT_EQ(FirstDiff(want, fused), -1) << g.name << ": unfused loops differ from fused loops";
    for (FastIsa isa : AvailableFastIsas()) {
      p.y_int32 = acc_got.data();
      QConv(p, 2, isa);
      EXPECT_EQ(acc_got, acc_want) << g.name << " int32 output at " << FastIsaName(isa);
      p.y = got.data();
      QRequantize(p, acc_want.data(), 2, isa);
      EXPECT_EQ(FirstDiff(want, got), -1) << g.name << " QRequantize at " << FastIsaName(isa);
    }
  }
}

// A plan packs once and runs on new inputs; a problem of another geometry is refused.
TEST(QConvFast, PlanRunsNewInputsAndRefusesAnotherGeometry) {
  const Variant v{QStorage::kInt8, QStorage::kUint8, false, QStorage::kUint8, false, 0};
  Data d;
  QConvProblem p = Make(kGeos[0], v, 3, d);
  const size_t out = static_cast<size_t>(p.n * p.m * p.oh * p.ow);
  for (FastIsa isa : AvailableFastIsas()) {
    const QConvPlan plan(p, isa);
    for (uint64_t round = 0; round < 3; ++round) {
      fast_test::Rng rng(100 + round);
      for (uint8_t& b : d.x) b = static_cast<uint8_t>(rng.Next());
      std::vector<uint8_t> want(out), got(out);
      p.y = want.data();
      QConvLoops(p);
      p.y = got.data();
      plan.Run(p, 2);
      EXPECT_EQ(FirstDiff(want, got), -1) << FastIsaName(isa) << " round " << round;
    }
    QConvProblem other = p;
    other.x_zero_point = 5;
    EXPECT_THROW(plan.Run(other, 1), InputError);
  }
}

}  // namespace
}  // namespace fusefuzz::int8
