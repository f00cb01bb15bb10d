// Human views of a graph: Graphviz DOT (fused nodes show their epilogue steps), a compact text
// form (one line per node), and a fingerprint that identifies a graph's structure and values.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "ir/graph.h"

namespace fusefuzz {

struct DotOptions {
  std::set<std::string> highlight;  // node names drawn highlighted (blamed rewrites)
  std::string title;
};
std::string ToDot(const Graph& g, const DotOptions& opts = {});

// e.g. "%y = Conv(%x) W[8,3,3,3] B[8] strides=[2,2] pads=[1,1,1,1]  # conv1"
std::string ToText(const Graph& g);

// 64-bit FNV-1a over a canonical serialization (ops, attrs, shapes, param bits, epilogues,
// wiring); names are included. Printed as 16 hex digits.
uint64_t Fingerprint(const Graph& g);
std::string FingerprintHex(const Graph& g);
// Same but ignoring names and param values: the op pattern, for dedup of findings.
uint64_t StructuralFingerprint(const Graph& g);

}  // namespace fusefuzz
