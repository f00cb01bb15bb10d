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
  // Whole files: a larger file is refused before one byte is read, and the JSON document may
  // hold at most this many values (numbers, strings, arrays, objects). Parsed JSON costs up to
  // ~64 bytes per value, so these two bound the memory a hostile file can make us spend.
  int64_t max_file_bytes = int64_t{1} << 30;   // 1 GiB
  int64_t max_json_values = int64_t{1} << 25;  // 32M: two maximal tensors as plain data arrays
};

}  // namespace fusefuzz
