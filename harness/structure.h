// The structure of a (minimized) graph as triage sees it: what a finding's signature keeps of
// the graph when no rule is blamed, and whether a case contains an already filed finding's
// minimized graph (then it is that finding's duplicate, without a minimization of its own).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

// The graph as triage signs it: every float FusedConv with an epilogue becomes its Conv followed
// by one node per step (an activation, Clip for a clamp, Add wired to the step's input, Mul then
// Add of per-channel constants for a scale-shift), the last one producing the node's output.
// A FusedConv(Clip) that a generator drew and a Conv -> Clip are one bug to a black box. A
// quantized node's epilogue (QLinearConv) is the integer kernel's contract and stays.
// `origin`, when given, receives per node of the result where it came from in `g`.
struct NodeSite {
  size_t node = 0;  // index in g.nodes
  int step = -1;    // epilogue step of that node, -1: the node itself (or a FusedConv's conv)
};
Graph EpiloguesAsNodes(const Graph& g, std::vector<NodeSite>* origin = nullptr);

// The graph without its quantized boundary: a QuantizeLinear of a graph input goes (its integers
// become the input) and so does a DequantizeLinear that ends the graph (its integers become the
// output). A rewrite between them sees integers either way, and an engine's minimized case keeps
// whichever the generator drew where the engine behaves differently with them (ONNX Runtime's
// bias-scale bug came as DQ -> Conv -> Q with and without a Q before and a DQ after: 4 folders
// for one cause). A graph that would be left with no node is returned as it is.
Graph WithoutQuantizedBoundary(const Graph& g);

// The graph with every QLinearConv and QLinearAdd as the QDQ nodes that define it (and that
// fusefuzz exports it as: an ONNX engine never sees the QLinear op): DequantizeLinear of each
// integer input, the float Conv (its epilogue kept, then split by EpiloguesAsNodes) or Add (and
// Relu for activation "relu"), and a QuantizeLinear producing the node's output. ONNX Runtime's
// MLAS QLinearAdd bug came as a QLinearAdd and as DQ, DQ -> Add -> Q: one model to the engine,
// two folders to triage.
Graph QLinearAsQdq(const Graph& g);

// One node's structural class: its op (a FusedConv without epilogue is a Conv), the names of
// its integer and string attributes that differ from their defaults, geometry (pads, strides,
// dilations, kernel sizes, target shapes) aside, the broadcast class of each constant operand
// of Add/Sub/Mul/Div/PRelu ("B:C" per channel, "B:1" a scalar, "A:HW" spatial), and whether a
// conv has an epilogue (not its steps).
std::string NodeClass(const Node& n);

// The canonical structure of a graph (after EpiloguesAsNodes): per node its NodeClass and where its
// inputs come from (a graph input, whichever, or node j; sorted for commutative Add and Mul), then
// the set of outputs.
std::string CanonicalStructure(const Graph& g);

// Does `g` contain `pattern` as a subgraph (both seen through EpiloguesAsNodes): its nodes with the
// same NodeClass, wired alike (a pattern input may be fed by anything), with `worst_output`
// downstream of the pattern's last node?
bool ContainsPattern(const Graph& g, const Graph& pattern, const std::string& worst_output);

// ContainsPattern up to the forms the minimizer gives activations (reduce/canonical_ops.cc): a
// pattern's Relu stands for any activation, its Clip for any activation but Relu. When `g`
// holds the pattern so, `g` with those activations replaced by the pattern's (op and
// attributes, in nodes and in epilogue steps): a case that still fails the same way once so
// rewritten holds the filed bug, at the cost of one run instead of a minimization. nullopt when
// there is no such match, or it needs no rewrite (ContainsPattern already says so).
std::optional<Graph> InPatternForms(const Graph& g, const Graph& pattern,
                                    const std::string& worst_output);

}  // namespace fusefuzz
