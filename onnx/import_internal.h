// Pieces of the ONNX import shared between its files (onnx/import.cc, onnx/import_quant.cc).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/limits.h"
#include "ir/quant.h"
#include "ir/tensor.h"

namespace fusefuzz {

struct OTensor {
  Shape dims;  // may be empty: a scalar
  int type = 0;
  std::vector<float> floats;  // type FLOAT; UINT8, INT8, INT32: the integers as floats
  std::vector<int64_t> ints;  // type INT64, UINT8, INT8, INT32
};

struct OAttr {
  int type = 0;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<int64_t> ints;
  onnx::TensorProto t;
};

struct ONode {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, OAttr> attrs;
  int record = -1;  // index in Importer::records_: the node fusefuzz's export decomposed here
  // Inputs that the model read through a Cast to float (RemoveIdentityCasts): float for it.
  std::set<std::string> float_views;
};

struct OValue {
  std::string name;
  Shape dims;
  bool static_shape = true;
  std::optional<QuantType> type;  // uint8/int8 graph inputs; nullopt: float32
};

// The quantized part of the import (onnx/import_quant.cc). Messages are the problem only; the
// importer adds the source and the node.

// "uint8", "int16", "float8e4m3fn", ... for messages; "data type N" when unknown.
std::string OnnxTypeName(int type);
// The QuantType of an ONNX element type, nullopt when fusefuzz does not model it.
std::optional<QuantType> QuantTypeOfOnnx(int type);
// Decodes the integers of a UINT8, INT8 or INT32 TensorProto of `count` elements (sizes checked
// before anything is allocated) into t->ints and t->floats. Throws InputError("", problem).
void DecodeIntegerTensor(const onnx::TensorProto& p, size_t count, OTensor* t);

// The quantization parameters of a QuantizeLinear / DequantizeLinear (or one triple of a
// QLinear node): `scale` and `zero` the constant inputs (zero may be null: uint8 0, or
// `x_type`), `axis` already normalized against the rank of the tensor. Refuses what fusefuzz
// does not model (a type other than uint8/int8/int32, a scale that is not float32, ...).
QuantParams QuantFromOnnx(const OTensor& scale, const OTensor* zero, std::optional<QuantType> type,
                          int64_t axis, const std::string& what);
// DequantizeLinear of a constant: (q - z) * s in float32, per channel along q.axis.
std::vector<float> DequantizeConstant(const OTensor& x, const QuantParams& q);
// Non-empty for an op type of a quantized model that fusefuzz does not model (why).
std::string QuantizedOpNotModeled(const std::string& op_type, const std::string& domain);

// Casts between float32 and the integer types are the identity in fusefuzz's representation (a
// quantized tensor holds its integers as floats); fusefuzz's export writes them at the model's
// boundary (onnx/export_quant.h). Removes each such Cast, renaming its output to its input (or,
// when its output is a graph output, the input to its output), and notes in *types the integer
// type that a Cast gives a graph input. Casts it cannot remove stay (and are refused later):
// a Cast to an integer type of a value the model computes in float (it truncates).
void RemoveIdentityCasts(std::vector<ONode>* nodes, const std::set<std::string>& graph_inputs,
                         const std::set<std::string>& graph_outputs,
                         std::map<std::string, QuantType>* types);

}  // namespace fusefuzz
