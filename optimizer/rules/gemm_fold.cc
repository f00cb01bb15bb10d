#include "optimizer/rules/gemm_fold.h"

#include <cmath>

#include "optimizer/rules/pattern.h"

namespace fusefuzz {

std::string FoldColumnAffineIntoGemm(const Node& gemm, int64_t m, const std::vector<double>& s,
                                     const std::vector<double>& t, GemmFolded* out) {
  const Tensor& b = gemm.params.at("B");
  const bool trans_b = AttrInt(gemm, "transB") != 0;
  const int64_t n = static_cast<int64_t>(s.size());
  std::vector<double> b2(b.data.size());
  for (int64_t r = 0; r < b.shape[0]; ++r) {
    for (int64_t c = 0; c < b.shape[1]; ++c) {
      const size_t i = static_cast<size_t>(r * b.shape[1] + c);
      b2[i] = static_cast<double>(b.data[i]) * s[static_cast<size_t>(trans_b ? r : c)];
    }
  }
  const double beta = AttrFloat(gemm, "beta");
  const Tensor* c = FindParam(gemm, "C");
  // C keeps a row dim only when it has one that is not 1.
  const bool rows = c && c->shape.size() == 2 && c->shape[0] != 1;
  const int64_t out_rows = rows ? m : 1;
  std::vector<double> c2(static_cast<size_t>(out_rows * n));
  for (int64_t i = 0; i < out_rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double cv = 0;
      if (c) {
        const Shape& cs = c->shape;
        const int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j)
                                          : (cs[0] == 1 ? 0 : j);
        cv = beta * static_cast<double>(c->data[static_cast<size_t>(ci)]);
      }
      c2[static_cast<size_t>(i * n + j)] =
          cv * s[static_cast<size_t>(j)] + (t.empty() ? 0.0 : t[static_cast<size_t>(j)]);
    }
  }
  if (!ToFloat(b2, b.shape, &out->b) || !ToFloat(c2, rows ? Shape{m, n} : Shape{n}, &out->c)) {
    return "folded weights or bias overflow float32";
  }
  return "";
}

void ReplaceByFoldedGemm(Rewriter& rw, int gemm, int after, GemmFolded f) {
  Node fused = rw.node(gemm);
  fused.params["B"] = std::move(f.b);
  fused.params["C"] = std::move(f.c);
  fused.attrs.erase("beta");  // beta * C is inside C' now: the default 1
  fused.output = rw.node(after).output;
  rw.ReplaceNode(after, std::move(fused));
  rw.EraseNode(gemm);
}

}  // namespace fusefuzz
