// Conv / FusedConv: per group, im2col + GEMM with Eigen; a 1x1 stride-1 unpadded conv is a plain
// GEMM on the input planes; group == C goes to the direct depthwise loop.
//
// The output of one (image, group) is the row-major product W_g [Mg, K] x col [K, P], whose rows
// are output channel planes. It is computed in blocks of at most kBlockM rows x kBlockP columns;
// after each block's GEMM the bias and the epilogue run on its rows while they are in cache.
// Block shapes are fixed constants, never derived from the thread count, so each output element
// is computed by the same GEMM call with the same operands whatever the thread count:
// results are bit-identical for any FastOptions.threads.
#include <Eigen/Core>
#include <vector>

#include "kernels/fast/conv_geometry.h"
#include "kernels/fast/conv_packed.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;
using MutMap = Eigen::Map<RowMat, Eigen::Unaligned, Eigen::OuterStride<>>;

constexpr int64_t kBlockM = 128;  // output channels per GEMM block
constexpr int64_t kBlockP = 512;  // output positions per GEMM block (~256 KiB of output)
// Cap on one im2col block (floats): with a huge reduction length K the column block narrows so
// that a hostile graph cannot make a task allocate K * 512 floats.
constexpr int64_t kColBudget = int64_t{1} << 21;

// Columns per block: a function of the reduction length only, never of the thread count.
int64_t ColumnsPerBlock(int64_t k) { return std::clamp<int64_t>(kColBudget / k, 1, kBlockP); }

bool IsPointwise(const ConvGeometry& g) {
  const ConvAttrs& a = g.a;
  return g.kh == 1 && g.kw == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_top == 0 &&
         a.pad_left == 0 && a.pad_bottom == 0 && a.pad_right == 0;
}

// col[r, q] for r = (c, i, j) over the group's input channels and q over positions
// [p0, p0 + cols) of the output plane; zeros where the tap falls in the padding.
void Im2Col(const ConvGeometry& g, const float* xg, int64_t p0, int64_t cols, float* col) {
  const ConvAttrs& a = g.a;
  for (int64_t c = 0; c < g.cg(); ++c) {
    const float* xc = xg + c * g.h * g.w;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t yoff = i * a.dilation_h - a.pad_top;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t xoff = j * a.dilation_w - a.pad_left;
        const Range rx = ValidRange(g.ow, g.w, a.stride_w, xoff);
        float* row = col + ((c * g.kh + i) * g.kw + j) * cols;
        // Walk the output rows covered by [p0, p0 + cols).
        for (int64_t q = 0; q < cols;) {
          const int64_t p = p0 + q, oy = p / g.ow, ox0 = p % g.ow;
          const int64_t n = std::min(g.ow - ox0, cols - q);  // positions left in this output row
          float* dst = row + q;  // dst[ox - ox0] for ox in [ox0, ox0 + n)
          const int64_t iy = oy * a.stride_h + yoff;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + n, 0.0f);
          } else {
            const float* xrow = xc + iy * g.w;
            const int64_t lo = std::clamp(rx.lo, ox0, ox0 + n);
            const int64_t hi = std::clamp(rx.hi, lo, ox0 + n);
            std::fill(dst, dst + (lo - ox0), 0.0f);
            const int64_t s = a.stride_w;
            if (s == 1) {  // a contiguous copy
              const int64_t shift = ox0 + xoff;
              for (int64_t t = lo - ox0; t < hi - ox0; ++t) dst[t] = xrow[t + shift];
            } else {
              for (int64_t ox = lo; ox < hi; ++ox) dst[ox - ox0] = xrow[ox * s + xoff];
            }
            std::fill(dst + (hi - ox0), dst + n, 0.0f);
          }
          q += n;
        }
      }
    }
  }
}

struct GemmConv {
  const ConvGeometry& g;
  const float* x;
  const float* w;
  const float* bias;  // may be null
  const Epilogue& epilogue;
  float* out;
  bool pointwise;

  int64_t block_p;  // ColumnsPerBlock(K)

  int64_t MBlocks() const { return (g.mg() + kBlockM - 1) / kBlockM; }
  int64_t PBlocks() const { return (g.p() + block_p - 1) / block_p; }

  // Output blocks [mb_begin, mb_end) of column block pb of image n, group gi.
  void Run(int64_t n, int64_t gi, int64_t pb, int64_t mb_begin, int64_t mb_end) const {
    const int64_t k = g.k(), plane = g.p(), p0 = pb * block_p;
    const int64_t cols = std::min(block_p, plane - p0);
    const float* xg = x + (n * g.c + gi * g.cg()) * g.h * g.w;
    std::vector<float> col_buf;
    const float* col;
    int64_t col_stride;
    if (pointwise) {  // the input planes already are the [Cg, H*W] GEMM operand
      col = xg + p0;
      col_stride = plane;
    } else {
      col_buf.resize(static_cast<size_t>(k * cols));
      Im2Col(g, xg, p0, cols, col_buf.data());
      col = col_buf.data();
      col_stride = cols;
    }
    ConstMap rhs(col, k, cols, Eigen::OuterStride<>(col_stride));
    for (int64_t mb = mb_begin; mb < mb_end; ++mb) {
      const int64_t m0 = gi * g.mg() + mb * kBlockM;
      const int64_t rows = std::min(kBlockM, g.mg() - mb * kBlockM);
      ConstMap lhs(w + m0 * k, rows, k, Eigen::OuterStride<>(k));
      float* dst = out + (n * g.m + m0) * plane + p0;
      MutMap result(dst, rows, cols, Eigen::OuterStride<>(plane));
      result.noalias() = lhs * rhs;
      for (int64_t r = 0; r < rows; ++r) {  // finish each row while the block is hot
        float* y = dst + r * plane;
        if (bias) {
          const float b = bias[m0 + r];
          for (int64_t q = 0; q < cols; ++q) y[q] += b;
        }
        if (!epilogue.empty()) epilogue.Apply(n, m0 + r, p0, p0 + cols, y);
      }
    }
  }
};

}  // namespace

void Conv(const Node& node, const Tensor& x, const Epilogue& epilogue, int threads, Tensor& out) {
  const Shape& out_shape = out.shape;
  const Tensor& wt = node.params.at("W");
  const ConvGeometry g = MakeConvGeometry(node, x.shape, wt.shape, out_shape);
  if (g.a.group == g.c && g.c > 1) {
    ConvDepthwise(node, x, out_shape, epilogue, threads, out.data.data());
    return;
  }
  const auto it = node.params.find("B");
  const float* bias = it == node.params.end() ? nullptr : it->second.data.data();
  if (!IsPointwise(g) && HavePackedConv()) {
    PackedConv(g, x.data.data(), wt.data.data(), bias, epilogue, threads, out.data.data());
    return;
  }
  const GemmConv conv{g,        x.data.data(),   wt.data.data(), bias,
                      epilogue, out.data.data(), IsPointwise(g), ColumnsPerBlock(g.k())};
  const int64_t pbs = conv.PBlocks(), mbs = conv.MBlocks();
  const int64_t column_tasks = g.n * g.a.group * pbs;
  if (column_tasks >= threads || mbs == 1) {
    // One im2col per column block, reused by all its channel blocks.
    ParallelFor(threads, column_tasks, [&](int64_t t) {
      conv.Run(t / (g.a.group * pbs), t / pbs % g.a.group, t % pbs, 0, mbs);
    });
  } else {
    // Too few column blocks to feed every thread: split channel blocks too (each task then
    // builds its own copy of the same im2col block; the GEMM blocks are unchanged).
    ParallelFor(threads, column_tasks * mbs, [&](int64_t t) {
      const int64_t c = t / mbs, mb = t % mbs;
      conv.Run(c / (g.a.group * pbs), c / pbs % g.a.group, c % pbs, mb, mb + 1);
    });
  }
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
