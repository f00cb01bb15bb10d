// Reading and writing the window geometry of conv and pool nodes, for the kernel, dilation,
// stride and pads passes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

inline bool IsConv(const Node& n) { return n.op == Op::Conv || n.op == Op::FusedConv; }
inline bool IsWindowPool(const Node& n) { return n.op == Op::MaxPool || n.op == Op::AvgPool; }

inline void SetInts(Node& n, const char* name, std::vector<int64_t> v) {
  n.attrs[name] = std::move(v);
}

// Pads [t, l, b, r] of a conv, pool or Pad node.
inline std::vector<int64_t> PadsOf(const Node& n) { return AttrInts(n, "pads"); }

inline int64_t ClampPad(int64_t p) { return std::max<int64_t>(p, 0); }

}  // namespace fusefuzz
