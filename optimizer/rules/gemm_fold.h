// Gemm folds shared by gemm-bn-fold and the fc-mul-broadcast fault: a per-output-column affine
// map y[i, j] * s[j] + t[j] after a Gemm, folded into its weights and bias. Computed in double,
// rounded to float32 once; the fold is refused when a value is not finite in float32.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/rewriter.h"

namespace fusefuzz {

struct GemmFolded {
  Tensor b, c;  // new B (same layout and transB) and new C, with beta = 1
};

// Y' = Y * s[j] + t[j] for Y = alpha * A'B' + beta * C of shape [m, n]: B' columns (rows when
// transB) scaled by s, C' = beta * C * s + t ([n], or [m, n] when C varies along rows).
// `t` may be empty (no shift). Returns "" or why the fold is refused.
std::string FoldColumnAffineIntoGemm(const Node& gemm, int64_t m, const std::vector<double>& s,
                                     const std::vector<double>& t, GemmFolded* out);

// The Gemm takes the place and output of `after` with the folded B and C; `after` goes.
void ReplaceByFoldedGemm(Rewriter& rw, int gemm, int after, GemmFolded f);

}  // namespace fusefuzz
