// What the reader fuzz targets share: tight Limits (a fuzz input must not make the readers
// allocate much) and how a broken invariant is reported (a message, then abort, which every
// fuzzing engine records as a crash).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/limits.h"

namespace fusefuzz::fuzz {

inline Limits FuzzLimits() {
  Limits l;
  l.max_elements_per_tensor = int64_t{1} << 16;
  l.max_nodes = 256;
  l.max_total_bytes = int64_t{1} << 22;
  l.max_dim = int64_t{1} << 16;
  l.max_json_values = int64_t{1} << 18;
  return l;
}

[[noreturn]] inline void FailInvariant(const char* target, const char* what,
                                       const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n  %s\n", target, what, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace fusefuzz::fuzz
