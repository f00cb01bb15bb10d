// The structure of a (minimized) graph as triage sees it: what a finding's signature keeps of
// the graph when no rule is blamed, and whether a case contains an already filed finding's
// minimized graph (then it is that finding's duplicate, without a minimization of its own).
#pragma once

#include <string>

#include "ir/graph.h"

namespace fusefuzz {

// The graph as triage signs it: every float FusedConv with an epilogue becomes its Conv followed
// by one node per step (an activation, Clip for a clamp, Add wired to the step's input, Mul then
// Add of per-channel constants for a scale-shift), the last one producing the node's output.
// A FusedConv(Clip) that a generator drew and a Conv -> Clip are one bug to a black box. A
// quantized node's epilogue (QLinearConv) is the integer kernel's contract and stays.
Graph EpiloguesAsNodes(const Graph& g);

// One node's structural class: its op (a FusedConv without epilogue is a Conv), the names of
// its integer and string attributes that differ from their defaults, geometry (pads, strides,
// dilations, kernel sizes, target shapes) aside, the broadcast class of each constant operand
// of Add/Sub/Mul/Div/PRelu ("B:C" per channel, "B:1" a scalar, "A:HW" spatial), and whether a
// conv has an epilogue (not its steps).
std::string NodeClass(const Node& n);

// The canonical structure of a graph (after EpiloguesAsNodes): per node its NodeClass and where its inputs come from (a
// graph input, whichever, or node j; sorted for commutative Add and Mul), then the set of outputs.
std::string CanonicalStructure(const Graph& g);

// Does `g` contain `pattern` as a subgraph (both seen through EpiloguesAsNodes): its nodes with the same NodeClass, wired alike (a
// pattern input may be fed by anything), with `worst_output` downstream of the pattern's last
// node?
bool ContainsPattern(const Graph& g, const Graph& pattern, const std::string& worst_output);

}  // namespace fusefuzz
