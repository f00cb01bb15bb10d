// Size limits checked before anything is allocated, so a hostile file declaring 10^12 elements
// is refused with a message instead of exhausting memory.
#pragma once

#include <cstdint>

namespace fusefuzz {

struct Limits {
  int64_t max_elements_per_tensor = int64_t{1} << 24;  // 16M floats = 64 MiB
  int64_t max_nodes = 10000;
  int64_t max_total_bytes = int64_t{1} << 30;  // all tensors of a graph/file together
  int64_t max_rank = 4;
  int64_t max_dim = int64_t{1} << 24;
};

}  // namespace fusefuzz
