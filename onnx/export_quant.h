// The quantized part of the ONNX export (docs/onnx.md, "Quantization"): standard QDQ form.
//
// fusefuzz holds a quantized tensor's integers as float32 (ir/quant.h); ONNX types them. So the
// export gives every value an ONNX element type: the outputs of QuantizeLinear, QLinearConv and
// QLinearAdd are uint8/int8 (their "y"), Identity, Reshape, Flatten, MaxPool and Concat pass an
// integer type through, everything else is float. Where a float op reads an integer value a
// Cast to float is added (exact); where DequantizeLinear (or a QLinear node) reads a graph input,
// a Cast to the integer type (exact for the integers in range that such an input holds). The
// model's inputs and outputs stay float32, as every fusefuzz tensor: an integer graph output is
// Cast back to float under its own name.
//
// The ops: QuantizeLinear / DequantizeLinear 1:1 (per-axis `axis`, typed zero points); a Conv,
// FusedConv or Gemm param declared on a grid (Node::quant) becomes an integer initializer and a
// DequantizeLinear; QLinearConv and QLinearAdd become their QDQ subgraphs
// (DQ -> Conv [-> Add(DQ r)] [-> activation] -> Q; DQ, DQ -> Add [-> Relu] -> Q), recorded so
// that the import gives the node back.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/quant.h"

namespace fusefuzz {

class QuantExport {
 public:
  // `graph` receives the nodes and initializers; the name sets are the exporter's.
  QuantExport(const Graph& g, onnx::GraphProto* graph, std::set<std::string>* used_values,
              std::set<std::string>* used_nodes,
              std::map<const Tensor*, std::string>* initializer_of);

  // The ONNX element type of fusefuzz value `v`: nullopt for float32.
  std::optional<QuantType> TypeOf(const std::string& v) const;

  // `n` with its inputs renamed to the ONNX names it reads (Casts added where needed) and its
  // output to the name it writes.
  Node MapNames(const Node& n);
  // After `n` is emitted: the Cast back to float of an integer graph output.
  void AfterNode(const Node& n);

  // Emits the quantized ops (n already mapped by MapNames). Throws InputError for what has no
  // exact ONNX form.
  void EmitQuantize(const Node& n);
  void EmitDequantize(const Node& n);
  void EmitQLinearConv(const Node& n);
  void EmitQLinearAdd(const Node& n);

  // The integer type a Pad node (mapped or not) pads, nullopt for a float Pad; and a scalar
  // initializer of that type (its constant_value).
  std::optional<QuantType> IntegerPadType(const Node& n) const;
  std::string IntScalar(const std::string& name, double v, QuantType type);

  // A param of node n declared on grid `q` (n.quant[param]): its integers as an initializer of
  // q's type, then a DequantizeLinear; returns the float value the op reads.
  std::string GridParam(const Node& n, const std::string& param, const Tensor& t,
                        const QuantParams& q);

 private:
  std::string Fresh(const std::string& base);
  // An initializer of integers `q` of `type` (raw_data, little-endian).
  std::string IntInitializer(const std::string& name, const Shape& dims,
                             const std::vector<int64_t>& q, QuantType type);
  std::string FloatScalar(const Node& n, const std::string& what, double v);
  std::string NodeName(const Node& n, const std::string& what);
  // `v` (an ONNX name) as float32 / as integers of `type`.
  std::string AsFloat(const std::string& v);
  std::string AsInt(const std::string& v, QuantType type, const Node& reader);
  // Scale and zero point initializers of `q` for node n ("<node>/<what>_scale", ...).
  std::pair<std::string, std::string> ScaleZero(const Node& n, const std::string& what,
                                                const QuantParams& q);
  std::string Dequantize(const Node& n, const std::string& what, const std::string& x,
                         const QuantParams& q);
  void Quantize(const Node& n, const std::string& name, const std::string& x, const std::string& y,
                const QuantParams& q);

  const Graph& g_;
  onnx::GraphProto* graph_;
  std::set<std::string>* used_values_;
  std::set<std::string>* used_nodes_;
  std::map<const Tensor*, std::string>* initializer_of_;  // the exporter's, for records
  std::map<std::string, QuantType> type_;                 // fusefuzz values of integer type
  std::set<std::string> outputs_;                         // the graph's outputs
  std::map<std::string, std::string> int_name_;  // integer value -> the ONNX name holding it
  std::map<std::string, std::string> casts_;     // (ONNX name + "/" + to) -> the Cast's output
};

}  // namespace fusefuzz
