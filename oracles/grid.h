// The integer-grid oracle's parts (oracles/grid.cc), used by Compare (oracles/oracle.cc) for
// every integer-valued output (a RefTensor with grid facts). docs/oracle.md, "The integer-grid
// oracle".
#pragma once

#include <string>

#include "ir/tensor.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"

namespace fusefuzz {

// Running state over the integer-valued outputs of one comparison.
struct GridTally {
  GridSummary s;
  bool have_worst = false;
  double worst_score = 0;  // > 1 fails
  WorstElement worst;
};

// The excess of answer c at grid position t with admitted half-width e, in steps: one definition
// for every report (docs/oracle.md, "excess"). Outside the admitted integers [lo, hi]
// (AdmittedRange) the distance to the nearer one (> 0: fails; a whole number for an integer c,
// at least 0.5 for a non-integer); inside, the margin left, min(|c - t| - 0.5 - e, 0) (0 for a
// saturated element at its limit).
double GridExcess(double c, double t, double e, int64_t qmin, int64_t qmax);

// `sigma`: judge with the sigma machinery's half-width (RefTensor::grid_es, --oracle sigma), else
// with the L1 one (grid_e).
void JudgeGridOutput(const std::string& out, const RefTensor& ref, const Tensor& cand, bool sigma,
                     GridTally* tally);
std::string GridDetail(const GridTally& g);

}  // namespace fusefuzz
