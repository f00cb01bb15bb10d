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

// `sigma`: judge with the sigma machinery's half-width (RefTensor::grid_es, --oracle sigma), else
// with the L1 one (grid_e).
void JudgeGridOutput(const std::string& out, const RefTensor& ref, const Tensor& cand, bool sigma,
                     GridTally* tally);
std::string GridDetail(const GridTally& g);

}  // namespace fusefuzz
