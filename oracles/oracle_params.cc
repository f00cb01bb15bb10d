// The accepted values of the oracle parameters, in one place: the command line (--k, --rtol,
// --atol, --max-ulp) and reproducer files (/oracle/k, ...) refuse exactly the same values.
#include <cmath>
#include <string>

#include "oracles/oracle.h"

namespace fusefuzz {

std::string OracleParamProblem(std::string_view name, double value) {
  if (name == "k") {
    // k = 0 means "derive k from the graph" inside the program; written, it is not a factor.
    if (!std::isfinite(value) || !(value > 0)) return "must be a finite number > 0";
  } else if (name == "rtol" || name == "atol") {
    if (!std::isfinite(value) || !(value >= 0)) return "must be a finite number >= 0";
  } else if (name == "max_ulp") {
    // An ulp distance is an integer; beyond 2^31 every pair of floats of one sign is accepted.
    if (!(value >= 0) || value > 4294967296.0 || value != std::floor(value)) {
      return "must be an integer in [0, 2^32]";
    }
  } else {
    return "is not an oracle parameter (k, rtol, atol, max_ulp)";
  }
  return "";
}

}  // namespace fusefuzz
