// Conv kernels: hand-computed values, then the reference over a table of geometries that hit
// every path (im2col GEMM, 1x1 plain GEMM, depthwise loop, several GEMM blocks), and thread
// counts 1/2/3 bit-identical.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

using fast_test::CheckAgainstReference;
using fast_test::Inputs;
using fast_test::OneNode;
using fast_test::Random;
using fast_test::Values;

struct ConvCase {
  const char* name;
  Shape x;            // [N, C, H, W]
  int64_t m, kh, kw;  // output channels, kernel
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;
  bool bias;
};

Node ConvNode(const ConvCase& c, uint64_t seed) {
  Node n;
  n.name = c.name;
  n.op = Op::Conv;
  n.attrs["strides"] = c.strides;
  n.attrs["dilations"] = c.dilations;
  n.attrs["pads"] = c.pads;
  n.attrs["group"] = c.group;
  n.params["W"] = Random({c.m, c.x[1] / c.group, c.kh, c.kw}, seed);
  if (c.bias) n.params["B"] = Random({c.m}, seed + 1);
  return n;
}

const ConvCase kCases[] = {
    {"c3_3x3_pad1", {1, 3, 7, 7}, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"c3_5x5_nopad_nobias", {1, 3, 7, 7}, 5, 5, 5, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},
    {"c5_5x5_stride2_asym", {2, 5, 9, 8}, 6, 5, 5, 1, {2, 2}, {1, 1}, {2, 1, 0, 3}, true},
    {"c3_3x3_dilation2", {1, 3, 11, 9}, 3, 3, 3, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}, true},
    {"c4_3x2_stride_hw", {1, 4, 10, 13}, 3, 3, 2, 1, {2, 3}, {1, 2}, {1, 0, 2, 1}, true},
    {"groups2", {2, 6, 7, 7}, 4, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"groups3_1x1", {1, 9, 5, 6}, 6, 1, 1, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},
    {"depthwise", {2, 5, 7, 7}, 5, 3, 3, 5, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"depthwise_mult2", {1, 3, 7, 7}, 6, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"depthwise_mult2_5x5_s2_d2", {1, 4, 13, 11}, 8, 5, 5, 4, {2, 2}, {2, 1}, {3, 2, 1, 4}, false},
    // Depthwise stride 1 goes through the zero-bordered plane: 3x3 and 5x5 sum their taps in
    // registers (asymmetric pads, dilation), other kernels one pass per tap.
    {"depthwise_5x5_asym_d2", {1, 3, 9, 10}, 3, 5, 5, 3, {1, 1}, {2, 1}, {4, 1, 3, 2}, true},
    {"depthwise_3x3_nopad_7x1", {2, 4, 7, 1}, 4, 3, 1, 4, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
    {"depthwise_2x4_pad_uneven", {1, 2, 6, 5}, 4, 2, 4, 2, {1, 1}, {1, 1}, {0, 2, 1, 1}, true},
    {"depthwise_3x3_1x1_plane", {1, 6, 1, 1}, 6, 3, 3, 6, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"pointwise_fast_path", {2, 7, 5, 9}, 11, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
    {"pointwise_stride2", {1, 7, 9, 9}, 5, 1, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, true},
    {"pointwise_padded", {1, 3, 4, 4}, 2, 1, 1, 1, {1, 1}, {1, 1}, {1, 0, 0, 1}, true},
    {"c1_single_channel", {1, 1, 6, 6}, 2, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // Several GEMM blocks: M > 128 rows and P > 512 columns, with ragged last blocks.
    {"many_blocks", {1, 3, 25, 23}, 133, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"many_blocks_1x1", {1, 17, 24, 23}, 130, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
    {"long_reduction", {1, 37, 6, 5}, 9, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // K = 4608 narrows the column blocks below 512 (im2col memory cap): 2 ragged blocks.
    {"narrow_column_blocks", {1, 512, 24, 24}, 2, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // The packed kernel (AVX2/AVX-512 copies). Direct mode (stride 1, zero-bordered planes):
    // M not a multiple of the register rows (6/8), positions not of the vector width, several
    // tiles per row, dilation with uneven pads, groups, and a 7x7 plane with more rows than
    // one task's 64 (split over threads when there are few position blocks).
    {"direct_ragged", {1, 5, 9, 11}, 13, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"direct_dilated_uneven_pads", {2, 4, 10, 9}, 9, 3, 3, 1, {1, 1}, {2, 2}, {2, 1, 0, 3}, true},
    {"direct_groups_nobias", {1, 8, 12, 12}, 12, 3, 3, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
    {"direct_many_blocks", {1, 3, 20, 20}, 70, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"direct_row_split", {1, 16, 7, 7}, 130, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"direct_5x5_asym", {1, 3, 11, 13}, 7, 5, 5, 1, {1, 1}, {1, 1}, {2, 0, 2, 4}, true},
    // Packed mode (im2col panels): strides, several reduction chunks (K = 360 > 256), ragged.
    {"packed_strided_ragged", {1, 6, 15, 13}, 17, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},
    {"packed_k_chunks", {2, 40, 9, 9}, 10, 3, 3, 1, {2, 2}, {1, 1}, {1, 0, 1, 2}, true},
    {"packed_row_split", {1, 40, 8, 8}, 75, 3, 3, 1, {2, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // Depthwise multiplier 1: channel blocks of 16 + a ragged one (AVX-512), planes not a
    // multiple of 16 pixels, strides, dilation, 5x5 (two weight transposes), 7x7 (49 taps: the
    // plane loops), a plane larger than 1024 (AVX2: the padded loop).
    {"dw_blocked_ragged", {2, 21, 5, 7}, 21, 3, 3, 21, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_blocked_stride2", {1, 17, 10, 9}, 17, 3, 3, 17, {2, 2}, {1, 1}, {1, 0, 1, 1}, true},
    {"dw_blocked_5x5_d2", {1, 16, 12, 11}, 16, 5, 5, 16, {1, 1}, {2, 1}, {4, 2, 4, 2}, false},
    {"dw_7x7_plane_loops", {1, 18, 9, 9}, 18, 7, 7, 18, {1, 1}, {1, 1}, {3, 3, 3, 3}, true},
    {"dw_big_plane", {1, 3, 40, 33}, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // Small 3x3 planes in registers (AVX2/AVX-512: at most 64 floats, rows narrower than a
    // vector): 1 to 4 vectors, a last vector of one float, a multiplier, 1x1 planes, several
    // tasks of planes. 5x5 on small planes: the blocked/flat paths.
    {"dw_small_3x5", {1, 3, 3, 5}, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_small_4x15", {1, 17, 4, 15}, 17, 3, 3, 17, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_small_last_lane", {1, 4, 11, 3}, 4, 3, 3, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
    {"dw_small_5x5", {1, 18, 6, 7}, 18, 5, 5, 18, {1, 1}, {1, 1}, {2, 2, 2, 2}, true},
    {"dw_small_mult3", {1, 2, 7, 7}, 6, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_small_1x1_planes", {2, 40, 1, 1}, 40, 3, 3, 40, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_small_tasks", {2, 90, 7, 7}, 90, 3, 3, 90, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    // Rows (rows of at least a vector, 3x3 and 5x5): one chunk, an overlapping last chunk,
    // several strips of chunks, row counts not a multiple of the rows in flight, one row, a
    // multiplier, planes above one task.
    {"dw_rows_w16", {1, 3, 5, 16}, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_rows_w20_5x5", {1, 5, 9, 20}, 5, 5, 5, 5, {1, 1}, {1, 1}, {2, 2, 2, 2}, true},
    {"dw_rows_w70", {1, 3, 11, 70}, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_rows_w70_5x5", {1, 2, 3, 70}, 2, 5, 5, 2, {1, 1}, {1, 1}, {2, 2, 2, 2}, false},
    {"dw_rows_one_row", {1, 4, 1, 33}, 4, 3, 3, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_rows_mult2", {1, 3, 6, 9}, 6, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_rows_tasks", {2, 40, 13, 17}, 40, 3, 3, 40, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
    {"dw_blocked_9x9", {2, 20, 9, 9}, 20, 3, 3, 20, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},
};

TEST(FastConv, MatchesReferenceOnEveryPath) {
  uint64_t seed = 100;
  for (const ConvCase& c : kCases) {
    Graph g = OneNode(ConvNode(c, seed), {c.x});
    CheckAgainstReference(g, Inputs(g, seed + 7), c.name);
    seed += 10;
  }
}

// RunFast takes outputs from the tensor pool, which may still hold an earlier level's result of
// the same graph: a kernel that skips an element could pass above. RunFastNode writes into a
// fresh zero tensor, at every level, compared with the reference again.
TEST(FastConv, EveryLevelWritesEveryElement) {
  uint64_t seed = 300;
  for (const ConvCase& c : kCases) {
    Graph g = OneNode(ConvNode(c, seed), {c.x});
    const TensorMap in = Inputs(g, seed + 7);
    const RefTensor ref = RunReference(g, in).at("out");
    for (FastIsa isa : AvailableFastIsas()) {
      const Tensor y = RunFastNode(g.nodes[0], {&in.at("x")}, ref.shape, FastOptions{2, isa});
      fast_test::ExpectNearReference(y, ref, std::string(c.name) + " [" + FastIsaName(isa) + "]");
    }
    seed += 10;
  }
}

TEST(FastConv, ThreadCountsAreBitIdentical) {
  uint64_t seed = 500;
  for (const ConvCase& c : kCases) {
    Graph g = OneNode(ConvNode(c, seed), {c.x});
    TensorMap in = Inputs(g, seed + 3);
    Tensor one = RunFast(g, in, FastOptions{1}).at("out");
    for (int threads : {2, 3}) {
      EXPECT_TRUE(one.BitwiseEquals(RunFast(g, in, FastOptions{threads}).at("out")))
          << c.name << " threads " << threads;
    }
    seed += 10;
  }
}

// Depthwise numerics (docs/kernels.md): at the FMA levels every depthwise path this table takes
// (small planes in registers, rows, channel-blocked, flat) computes each element as the bias,
// then the taps in (i, j) order, one FMA each, a padding tap as w * 0: bit for bit the fmaf
// chain here.
TEST(FastConv, DepthwiseIsTheFmaChainAtFmaLevels) {
  uint64_t seed = 700;
  for (const ConvCase& c : kCases) {
    const int64_t n = c.x[0], ch = c.x[1], h = c.x[2], w = c.x[3];
    if (c.group != ch || ch == 1 || c.strides != std::vector<int64_t>{1, 1} ||
        c.dilations != std::vector<int64_t>{1, 1} || h * w > 1024) {
      continue;  // not depthwise (C = 1 is the GEMM), or the padded/general plane loops
    }
    const Node node = ConvNode(c, seed);
    const Tensor x = Random(c.x, seed + 7);
    const int64_t mult = c.m / ch, oh = h + c.pads[0] + c.pads[2] - c.kh + 1,
                  ow = w + c.pads[1] + c.pads[3] - c.kw + 1;
    const std::vector<float>& wt = node.params.at("W").data;
    std::vector<float> want;
    for (int64_t img = 0; img < n; ++img) {
      for (int64_t m = 0; m < c.m; ++m) {
        const float* xp = x.data.data() + (img * ch + m / mult) * h * w;
        for (int64_t oy = 0; oy < oh; ++oy) {
          for (int64_t ox = 0; ox < ow; ++ox) {
            float s = c.bias ? node.params.at("B").data[static_cast<size_t>(m)] : 0.0f;
            for (int64_t i = 0; i < c.kh; ++i) {
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t iy = oy + i - c.pads[0], ix = ox + j - c.pads[1];
                const float v = iy >= 0 && iy < h && ix >= 0 && ix < w ? xp[iy * w + ix] : 0.0f;
                s = std::fmaf(wt[static_cast<size_t>((m * c.kh + i) * c.kw + j)], v, s);
              }
            }
            want.push_back(s);
          }
        }
      }
    }
    for (FastIsa isa : AvailableFastIsas()) {
      if (isa == FastIsa::kSse2) continue;  // no FMA in the baseline copy
      const Tensor y = RunFastNode(node, {&x}, {n, c.m, oh, ow}, FastOptions{2, isa});
      EXPECT_TRUE(y.BitwiseEquals(Tensor({n, c.m, oh, ow}, want)))
          << c.name << " [" << FastIsaName(isa) << "]";
    }
    seed += 10;
  }
}

TEST(FastConv, HandComputedPaddedConv) {
  // x = [[1,2],[3,4]], W = all ones 2x2, pad 1 on all sides, bias 10: each output is 10 plus the
  // sum of the input elements its window covers.
  ConvCase c{"hand", {1, 1, 2, 2}, 1, 2, 2, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true};
  Node n = ConvNode(c, 1);
  n.params["W"] = Values({1, 1, 2, 2}, {1, 1, 1, 1});
  n.params["B"] = Values({1}, {10});
  Graph g = OneNode(n, {c.x});
  Tensor out = RunFast(g, {{"x", Values({1, 1, 2, 2}, {1, 2, 3, 4})}}).at("out");
  EXPECT_EQ(out.shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(out.data, (std::vector<float>{11, 13, 12, 14, 20, 16, 13, 17, 14}));
}

TEST(FastConv, HandComputedDepthwiseMultiplier) {
  // 2 input channels, multiplier 2: output channel m reads input channel m / 2.
  ConvCase c{"dw", {1, 2, 1, 2}, 4, 1, 1, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, false};
  Node n = ConvNode(c, 1);
  n.params["W"] = Values({4, 1, 1, 1}, {1, -1, 2, 3});
  Graph g = OneNode(n, {c.x});
  Tensor out = RunFast(g, {{"x", Values({1, 2, 1, 2}, {1, 2, 5, 7})}}).at("out");
  EXPECT_EQ(out.data, (std::vector<float>{1, 2, -1, -2, 10, 14, 15, 21}));
}

TEST(FastConv, HandComputedGroupedPointwise) {
  // group 2, 1x1: out0 = x0 + x1 (group 0), out1 = x2 - x3 (group 1).
  ConvCase c{"g2", {1, 4, 1, 1}, 2, 1, 1, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, false};
  Node n = ConvNode(c, 1);
  n.params["W"] = Values({2, 2, 1, 1}, {1, 1, 1, -1});
  Graph g = OneNode(n, {c.x});
  Tensor out = RunFast(g, {{"x", Values({1, 4, 1, 1}, {1, 2, 10, 3})}}).at("out");
  EXPECT_EQ(out.data, (std::vector<float>{3, 7}));
}

TEST(FastConv, RejectsBadThreadCount) {
  ConvCase c = kCases[0];
  Graph g = OneNode(ConvNode(c, 1), {c.x});
  EXPECT_THROW(RunFast(g, Inputs(g, 1), FastOptions{0}), InputError);
}

}  // namespace
}  // namespace fusefuzz
