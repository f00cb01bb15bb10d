// Out-of-line parts of the rule interface (optimizer/rule.h).
#include "optimizer/rule.h"

#include <cstdlib>
#include <iostream>

namespace fusefuzz {

void MatchFromAnotherRule(const Rule& applier) {
  // A driver bug, not an input problem: a match carries data only its own rule can read.
  std::cerr << "fusefuzz: rule '" << applier.name()
            << "' was asked to apply a match it did not make\n";
  std::abort();
}

}  // namespace fusefuzz
