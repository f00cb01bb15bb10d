// The quantized part of the ONNX import (onnx/import_internal.h, docs/onnx.md "Quantization").
#include <cstring>

#include "ir/error.h"
#include "onnx/import_internal.h"

namespace fusefuzz {

std::string OnnxTypeName(int type) {
  // TensorProto.DataType numbers (onnx.proto); 17.. are newer than libonnx 1.12's enum.
  static const char* const kNames[] = {
      "undefined",      "float",      "uint8",          "int8",       "uint16",   "int16",
      "int32",          "int64",      "string",         "bool",       "float16",  "double",
      "uint32",         "uint64",     "complex64",      "complex128", "bfloat16", "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",      "int4",     "float4e2m1"};
  if (type >= 0 && type < static_cast<int>(sizeof kNames / sizeof kNames[0])) {
    return kNames[type];
  }
  return "data type " + std::to_string(type);
}

std::optional<QuantType> QuantTypeOfOnnx(int type) {
  if (type == onnx::TensorProto::UINT8) return QuantType::kUint8;
  if (type == onnx::TensorProto::INT8) return QuantType::kInt8;
  if (type == onnx::TensorProto::INT32) return QuantType::kInt32;
  return std::nullopt;
}

void DecodeIntegerTensor(const onnx::TensorProto& p, size_t count, OTensor* t) {
  const std::optional<QuantType> q = QuantTypeOfOnnx(p.data_type());
  if (!q) throw InputError("", "data type " + OnnxTypeName(p.data_type()) + " is not an integer");
  const size_t width = *q == QuantType::kInt32 ? 4 : 1;
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != width * count) throw InputError("", "raw_data size does not match the dims");
    t->ints.resize(count);
    for (size_t i = 0; i < count; ++i) {
      if (*q == QuantType::kInt32) {
        int32_t v = 0;
        std::memcpy(&v, raw.data() + 4 * i, 4);  // little-endian host
        t->ints[i] = v;
      } else if (*q == QuantType::kInt8) {
        t->ints[i] = static_cast<int8_t>(raw[i]);
      } else {
        t->ints[i] = static_cast<uint8_t>(raw[i]);
      }
    }
  } else {
    // ONNX stores 8-bit and 32-bit integers in int32_data, one per element.
    if (static_cast<size_t>(p.int32_data_size()) != count) {
      throw InputError("", "int32_data size does not match the dims");
    }
    const int64_t lo = QMin(*q), hi = QMax(*q);
    t->ints.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const int64_t v = p.int32_data(static_cast<int>(i));
      if (v < lo || v > hi) {
        throw InputError("", "int32_data element " + std::to_string(i) + " = " + std::to_string(v) +
                                 " is out of range for " + OnnxTypeName(p.data_type()));
      }
      t->ints[i] = v;
    }
  }
  t->floats.resize(count);
  for (size_t i = 0; i < count; ++i) t->floats[i] = static_cast<float>(t->ints[i]);
}

QuantParams QuantFromOnnx(const OTensor& scale, const OTensor* zero, std::optional<QuantType> type,
                          int64_t axis, const std::string& what) {
  if (scale.type != onnx::TensorProto::FLOAT) {
    throw InputError("", what + " scale is " + OnnxTypeName(scale.type) +
                             " (fusefuzz models float32 scales only)");
  }
  if (scale.dims.size() > 1) {
    throw InputError("", what + " scale has rank " + std::to_string(scale.dims.size()) +
                             ": blocked quantization is not modeled (per tensor or per axis only)");
  }
  QuantParams q;
  if (zero) {
    const std::optional<QuantType> zt = QuantTypeOfOnnx(zero->type);
    if (!zt) {
      throw InputError("", what + " zero point is " + OnnxTypeName(zero->type) +
                               " (fusefuzz models uint8, int8 and int32 only)");
    }
    if (type && *type != *zt) {
      throw InputError("", what + " zero point is " + OnnxTypeName(zero->type) +
                               " but the tensor is " + std::string(QuantTypeName(*type)));
    }
    if (zero->dims != scale.dims) {
      throw InputError("", what + " zero point has shape " + ShapeToString(zero->dims) +
                               ", its scale " + ShapeToString(scale.dims));
    }
    q.type = *zt;
  } else {
    q.type = type.value_or(QuantType::kUint8);  // ONNX's default
  }
  q.scale.assign(scale.floats.begin(), scale.floats.end());
  if (zero) {
    q.zero_point = zero->ints;
  } else {
    q.zero_point.assign(q.scale.size(), 0);
  }
  // A scale of one element (rank 0 or [1]) is per tensor, as ONNX Runtime reads it.
  q.axis = q.scale.size() == 1 ? -1 : axis;
  if (q.scale.empty()) throw InputError("", what + " scale is empty");
  return q;
}

std::vector<float> DequantizeConstant(const OTensor& x, const QuantParams& q) {
  const Shape shape = x.dims.empty() ? Shape{1} : x.dims;
  if (static_cast<size_t>(NumElements(shape)) != x.ints.size()) {
    throw InputError("", "the integers do not match the dims");  // decoded with them: never
  }
  std::vector<float> out(x.ints.size());
  ForEachQuantElement(q, shape, [&](size_t i, double s, int64_t z) {
    out[i] = DequantizeOnnxInt(x.ints[i], static_cast<float>(s), z);
  });
  return out;
}

std::string QuantizedOpNotModeled(const std::string& op_type, const std::string& domain) {
  static const char* const kQuantized[] = {"QLinearMatMul",
                                           "MatMulInteger",
                                           "ConvInteger",
                                           "DynamicQuantizeLinear",
                                           "QLinearMul",
                                           "QLinearConcat",
                                           "QLinearSigmoid",
                                           "QLinearLeakyRelu",
                                           "QLinearAveragePool",
                                           "QLinearGlobalAveragePool",
                                           "QLinearSoftmax",
                                           "QGemm",
                                           "QAttention",
                                           "QLinearWhere",
                                           "DynamicQuantizeMatMul",
                                           "MatMulIntegerToFloat",
                                           "MatMulNBits",
                                           "QuickGelu",
                                           "QLinearReduceMean",
                                           "DequantizeBFP",
                                           "QuantizeBFP",
                                           "MatMulBnb4",
                                           "GatherBlockQuantized"};
  for (const char* q : kQuantized) {
    if (op_type == q) {
      return "a quantized op that fusefuzz does not model (it models QuantizeLinear, "
             "DequantizeLinear, QLinearConv and QLinearAdd)";
    }
  }
  if (!domain.empty() && domain != "ai.onnx" &&
      (op_type == "QuantizeLinear" || op_type == "DequantizeLinear")) {
    return "the " + domain + " form of " + op_type +
           " (int16/float8/int4 extensions) is not modeled; only the standard op";
  }
  return "";
}

void RemoveIdentityCasts(std::vector<ONode>* nodes, const std::set<std::string>& graph_inputs,
                         const std::set<std::string>& graph_outputs,
                         std::map<std::string, QuantType>* types) {
  std::map<std::string, std::string> rename;  // applied to every node's inputs and outputs
  std::set<std::string> float_casts;          // outputs of the Casts to float removed
  std::vector<ONode> kept;
  for (ONode& n : *nodes) {
    if (n.op_type != "Cast" || !(n.domain.empty() || n.domain == "ai.onnx") ||
        n.inputs.size() != 1 || n.outputs.size() != 1 || !n.attrs.count("to")) {
      kept.push_back(std::move(n));
      continue;
    }
    const int to = static_cast<int>(n.attrs.at("to").i);
    const std::string& in = n.inputs[0];
    const std::string& out = n.outputs[0];
    const bool to_float = to == onnx::TensorProto::FLOAT;
    const std::optional<QuantType> to_int = QuantTypeOfOnnx(to);
    bool removable = false;
    if (to_float) {
      // int -> float (or float -> float) keeps every value.
      removable =
          !(graph_outputs.count(out) && (graph_inputs.count(in) || graph_outputs.count(in)));
    } else if (to_int && graph_inputs.count(in) && !graph_outputs.count(out)) {
      // The export's Cast of a graph input that holds integers.
      removable = true;
      (*types)[in] = *to_int;
    }
    if (!removable) {
      kept.push_back(std::move(n));
      continue;
    }
    if (to_float) float_casts.insert(out);
    if (graph_outputs.count(out)) {
      rename[in] = out;
    } else {
      rename[out] = in;
    }
  }
  auto apply = [&](std::string& v) {
    for (int hops = 0; hops < 64; ++hops) {  // chains of Casts; bounded against cycles
      auto it = rename.find(v);
      if (it == rename.end() || it->second == v) return;
      v = it->second;
    }
  };
  for (ONode& n : kept) {
    for (std::string& v : n.inputs) {
      if (v.empty()) continue;
      const bool view = float_casts.count(v) > 0;
      apply(v);
      if (view) n.float_views.insert(v);
    }
    for (std::string& v : n.outputs) {
      if (!v.empty()) apply(v);
    }
  }
  std::map<std::string, QuantType> renamed;
  for (const auto& [name, t] : *types) {
    std::string v = name;
    apply(v);
    renamed[v] = t;
  }
  *types = std::move(renamed);
  *nodes = std::move(kept);
}

}  // namespace fusefuzz
