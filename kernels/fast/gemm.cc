// Gemm and MatMul: one Eigen GEMM in float32 (no threading inside Eigen, so results do not depend
// on the thread count), then for Gemm the alpha/beta/C epilogue and its activation/clamp steps in
// place, row by row.
#include <Eigen/Core>
#include <string>

#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat>;
using MutMap = Eigen::Map<RowMat>;

// Activation and clamp steps over a row-major [rows, cols] block; the channel is the column.
void ApplyGemmEpilogue(const Node& n, int64_t rows, int64_t cols, float* y) {
  const std::string where = "node '" + n.name + "' (Gemm)";
  for (size_t k = 0; k < n.epilogue.size(); ++k) {
    const EpilogueStep& s = n.epilogue[k];
    const std::string step_where = where + " epilogue step " + std::to_string(k);
    const Activation act = s.kind == EpilogueKind::kClamp
                               ? MakeActivation(Op::Clip, s.attrs, {}, step_where)
                               : MakeActivation(s.act, s.attrs, s.params, step_where);
    if (act.op == Op::PRelu && act.slope.size() > 1) {
      // Per-column slope: one column element at a time.
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) ApplyActivation(act, y + i * cols + j, 1, j);
      }
    } else {
      ApplyActivation(act, y, rows * cols, 0);
    }
  }
}

}  // namespace

void GemmOp(const Node& n, const Tensor& x, int /*threads*/, Tensor& y) {
  const Tensor& b = n.params.at("B");
  if (n.op == Op::MatMul) {
    const int64_t k = b.shape[0], cols = b.shape[1], rows = x.size() / k;
    MutMap(y.data.data(), rows, cols).noalias() =
        ConstMap(x.data.data(), rows, k) * ConstMap(b.data.data(), k, cols);
    return;
  }
  const GemmDims d = GetGemmDims(n, x.shape);
  const ConstMap a(x.data.data(), x.shape[0], x.shape[1]);
  const ConstMap bm(b.data.data(), b.shape[0], b.shape[1]);
  MutMap out(y.data.data(), d.m, d.n);
  if (d.trans_a && d.trans_b) {
    out.noalias() = a.transpose() * bm.transpose();
  } else if (d.trans_a) {
    out.noalias() = a.transpose() * bm;
  } else if (d.trans_b) {
    out.noalias() = a * bm.transpose();
  } else {
    out.noalias() = a * bm;
  }
  const float alpha = static_cast<float>(d.alpha), beta = static_cast<float>(d.beta);
  if (alpha != 1.0f) out *= alpha;
  if (auto it = n.params.find("C"); it != n.params.end()) {
    const Tensor& c = it->second;
    const Shape& cs = c.shape;
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        const int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                                          : (cs[0] == 1 ? 0 : j);
        out(i, j) += beta * c.data[static_cast<size_t>(ci)];
      }
    }
  }
  ApplyGemmEpilogue(n, d.m, d.n, y.data.data());
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
