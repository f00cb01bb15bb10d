// The graph: SSA values named by strings, nodes in topological order, one output per node.
//
// Binary ops (Add/Sub/Mul/Div) have operands A and B. Each is either a node input (in order) or a
// constant param named "A" or "B": `{"op":"Sub","inputs":["x"],"params":{"A":c}}` computes c - x.
//
// FusedConv = Conv followed by an ordered epilogue applied to every output element; its reference
// semantics are exactly the unfused sequence of its steps. A Gemm may carry an epilogue of
// activation and clamp steps (the channel of its [M, N] output is dim 1, N).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/ops.h"
#include "ir/quant.h"
#include "ir/tensor.h"

namespace fusefuzz {

using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;
using AttrMap = std::map<std::string, AttrValue>;
using ParamMap = std::map<std::string, Tensor>;

enum class EpilogueKind {
  kScaleShift,  // y = y * scale[c] + shift[c]; params "scale", "shift" of shape [M]
  kAdd,         // y = y + inputs[input] (same shape as the conv output, or broadcastable to it)
  kActivation,  // y = act(y); `act` is an activation op, with its attrs/params (PRelu "slope")
  kClamp,       // y = min(max(y, attrs.min), attrs.max)
};
std::string_view EpilogueKindName(EpilogueKind k);

struct EpilogueStep {
  EpilogueKind kind = EpilogueKind::kActivation;
  Op act = Op::Relu;  // kActivation only
  int input = 1;      // kAdd only: index into the node's inputs
  AttrMap attrs;      // kActivation: the activation's attrs; kClamp: "min", "max"
  ParamMap params;    // kScaleShift: "scale", "shift"; kActivation PRelu: "slope"
  bool operator==(const EpilogueStep&) const = default;
};

struct Node {
  std::string name;
  Op op = Op::Identity;
  std::vector<std::string> inputs;
  std::string output;
  AttrMap attrs;
  ParamMap params;
  std::vector<EpilogueStep> epilogue;  // FusedConv; Gemm: activation and clamp steps only;
                                       // QLinearConv: add (input 1), then one Relu/Relu6/Clip
  QuantMap quant;                      // by role (ir/quant.h); empty for float ops
  std::string spelling;  // how an engine writes it (ir/spellings.def); "" = the plain way
  bool operator==(const Node&) const = default;
};

struct ValueInfo {
  std::string name;
  Shape shape;
  bool operator==(const ValueInfo&) const = default;
};

// Graph-wide options (the "options" object of the graph JSON).
struct GraphOptions {
  // Negative quantization scales are refused unless this is set (a generator option sets it to
  // exercise the bugs that negative scales trigger: MaxPool through a negative scale).
  bool allow_negative_scale = false;
  bool operator==(const GraphOptions&) const = default;
};

struct Graph {
  std::vector<ValueInfo> inputs;
  std::vector<Node> nodes;  // topological order
  std::vector<std::string> outputs;
  GraphOptions options;
  bool operator==(const Graph&) const = default;

  // Lookups; linear scans, graphs are small. Return nullptr / -1 when absent.
  const Node* Producer(const std::string& value) const;
  int ProducerIndex(const std::string& value) const;
  const Node* FindNode(const std::string& name) const;
  int NodeIndex(const std::string& name) const;
  // Nodes consuming `value` (a node using it twice appears once), in graph order.
  std::vector<int> Consumers(const std::string& value) const;
  bool IsGraphOutput(const std::string& value) const;
  bool IsGraphInput(const std::string& value) const;
};

// Typed attribute access with the schema's default when absent. Throws InputError naming the
// node when the attr has the wrong type or is required and missing.
int64_t AttrInt(const Node& n, const std::string& name);
double AttrFloat(const Node& n, const std::string& name);
std::vector<int64_t> AttrInts(const Node& n, const std::string& name);
std::string AttrString(const Node& n, const std::string& name);
// Same for the attrs of an activation held elsewhere (an epilogue step).
int64_t AttrInt(Op op, const AttrMap& attrs, const std::string& name, const std::string& where);
double AttrFloat(Op op, const AttrMap& attrs, const std::string& name, const std::string& where);
std::vector<int64_t> AttrInts(Op op, const AttrMap& attrs, const std::string& name,
                              const std::string& where);
std::string AttrString(Op op, const AttrMap& attrs, const std::string& name,
                       const std::string& where);

// Removes the attributes that hold their schema default (same type and value): the canonical
// form that the generator mostly writes and `fusefuzz import` writes (docs/onnx.md).
void DropDefaultAttrs(Op op, AttrMap& attrs);

// Conv attributes, decoded once (Conv and FusedConv).
struct ConvAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;  // ONNX order t,l,b,r
  int64_t group = 1;
};
ConvAttrs GetConvAttrs(const Node& n);

// Pool attributes (MaxPool/AvgPool).
struct PoolAttrs {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AvgPool only
};
PoolAttrs GetPoolAttrs(const Node& n);

// Gemm attributes and the matrix sizes of a Gemm (or MatMul, alpha = beta = 1) with input
// shape `a`: Y[M, N] = alpha * A'[M, K] * B'[K, N] + beta * C.
struct GemmDims {
  int64_t m = 0, k = 0, n = 0;
  double alpha = 1, beta = 1;
  bool trans_a = false, trans_b = false;
};
GemmDims GetGemmDims(const Node& n, const Shape& a);

// Binary operands: which side is a constant (if any).
struct BinaryOperands {
  const Tensor* const_a = nullptr;  // constant left operand, or null
  const Tensor* const_b = nullptr;  // constant right operand, or null
  // Index into node.inputs of A / B when they are values, else -1.
  int input_a = -1, input_b = -1;
};
BinaryOperands GetBinaryOperands(const Node& n);

}  // namespace fusefuzz
