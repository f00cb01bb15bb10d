// Human views of a graph: Graphviz DOT (fused nodes show their epilogue steps), a compact text
// form (one line per node), and a fingerprint that identifies a graph's structure and values.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ir/graph.h"

namespace fusefuzz {

struct DotOptions {
  std::set<std::string> highlight;  // node names drawn highlighted (blamed rewrites)
  std::set<std::string> touched;    // node names drawn lighter (other rewrites), unless highlighted
  std::map<std::string, std::string> notes;  // node name -> an extra line in its box
  std::string title;
  // A graph output drawn as failing (red border), with `failing_note` under its name (e.g. the
  // worst element and its reference and candidate values).
  std::string failing_output;
  std::string failing_note;
  // Tiny tensors are labeled with their values: params of at most `small_tensor` elements in
  // the node boxes, and edges whose value is in `values` (inputs, intermediate values).
  int64_t small_tensor = 0;
  const TensorMap* values = nullptr;
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
