// ONNX import: decode the ModelProto with the small protobuf reader, then map each node to a
// fusefuzz op. Shapes are inferred node by node (ONNX requires topological order), which is what
// auto_pad needs. Every size is checked against Limits before anything is allocated.
#include "onnx/import.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/verifier.h"
#include "onnx/onnx_fields.h"
#include "onnx/proto_writer.h"

namespace fusefuzz {
namespace {

namespace f = onnxf;

struct OTensor {
  Shape dims;  // may be empty: a scalar
  int type = 0;
  std::vector<float> floats;  // type FLOAT
  std::vector<int64_t> ints;  // type INT64
};

struct OAttr {
  int type = 0;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::string t;  // a TensorProto, undecoded
};

struct ONode {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;
  std::map<std::string, OAttr> attrs;
};

struct OValue {
  std::string name;
  Shape dims;
  bool static_shape = true;
};

class Importer {
 public:
  Importer(std::string source, const Limits& limits) : src_(std::move(source)), limits_(limits) {}

  Graph Run(std::string_view bytes) {
    DecodeModel(bytes);
    Graph g;
    for (const OValue& v : inputs_) {
      if (consts_.count(v.name)) continue;  // an initializer listed as input (IR < 4)
      if (!v.static_shape || v.dims.empty() || static_cast<int64_t>(v.dims.size()) > 4) {
        Fail("graph input '" + v.name + "' needs a static float shape of rank 1..4");
      }
      g.inputs.push_back({v.name, v.dims});
      shapes_[v.name] = v.dims;
    }
    std::set<std::string> node_names;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const ONode& on = nodes_[i];
      if (on.op_type == "Constant") {
        AddConstant(on);
        continue;
      }
      Node n = Convert(on);
      std::string base = on.name.empty() ? "node" + std::to_string(i) : on.name;
      n.name = base;
      for (int k = 1; node_names.count(n.name); ++k) n.name = base + "_" + std::to_string(k);
      node_names.insert(n.name);
      std::vector<Shape> in;
      for (const auto& v : n.inputs) in.push_back(ShapeOf(v, on));
      try {
        shapes_[n.output] = InferNodeShape(n, in);
      } catch (const InputError& e) {
        Fail(NodeWhere(on) + ": " + e.what());
      }
      g.nodes.push_back(std::move(n));
    }
    for (const std::string& o : outputs_) {
      if (!shapes_.count(o)) Fail("graph output '" + o + "' is not computed by a node");
      g.outputs.push_back(o);
    }
    try {
      VerifyGraph(g, limits_);
    } catch (const InputError& e) {
      Fail(e.what());
    }
    return g;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw InputError(src_, what); }
  static std::string NodeWhere(const ONode& n) {
    return "node '" + n.name + "' (op type " + n.op_type + ")";
  }
  [[noreturn]] void FailNode(const ONode& n, const std::string& what) const {
    Fail(NodeWhere(n) + ": " + what);
  }

  void Check(const pb::Reader& r, const char* what) const {
    if (!r.error().empty()) Fail(std::string("malformed ") + what + ": " + r.error());
  }

  static std::vector<int64_t> Varints(std::string_view p, bool* ok) {
    std::vector<int64_t> out;
    size_t pos = 0;
    while (pos < p.size()) {
      uint64_t v = 0;
      int shift = 0;
      for (;;) {
        if (pos >= p.size() || shift >= 70) {
          *ok = false;
          return out;
        }
        auto b = static_cast<uint8_t>(p[pos++]);
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
      }
      out.push_back(static_cast<int64_t>(v));
    }
    return out;
  }

  OTensor DecodeTensor(std::string_view bytes, const std::string& what) const {
    OTensor t;
    std::string_view raw;
    bool have_raw = false;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    pb::Reader r(bytes);
    while (r.Next()) {
      switch (r.field()) {
        case f::kTensorDims:
          if (r.wire_type() == pb::WireType::kVarint) {
            t.dims.push_back(static_cast<int64_t>(r.varint()));
          } else {
            bool ok = true;
            for (int64_t d : Varints(r.bytes(), &ok)) t.dims.push_back(d);
            if (!ok) Fail(what + ": malformed dims");
          }
          if (t.dims.size() > 4) Fail(what + ": rank above 4");
          break;
        case f::kTensorDataType:
          t.type = static_cast<int>(r.varint());
          break;
        case f::kTensorRawData:
          raw = r.bytes();
          have_raw = true;
          break;
        case f::kTensorFloatData:
          if (r.wire_type() == pb::WireType::kFixed32) {
            float v;
            uint32_t bits = r.fixed32();
            std::memcpy(&v, &bits, 4);
            floats.push_back(v);
          } else if (r.wire_type() == pb::WireType::kLengthDelimited) {
            std::string_view p = r.bytes();
            if (p.size() % 4) Fail(what + ": malformed float_data");
            for (size_t i = 0; i + 4 <= p.size(); i += 4) {
              float v;
              std::memcpy(&v, p.data() + i, 4);  // little-endian host (x86-64, arm64)
              floats.push_back(v);
            }
          }
          break;
        case f::kTensorInt64Data:
          if (r.wire_type() == pb::WireType::kVarint) {
            ints.push_back(static_cast<int64_t>(r.varint()));
          } else {
            bool ok = true;
            for (int64_t v : Varints(r.bytes(), &ok)) ints.push_back(v);
            if (!ok) Fail(what + ": malformed int64_data");
          }
          break;
        case f::kTensorDataLocation:
          if (r.varint() != 0) Fail(what + ": external data is not supported");
          break;
        default:
          break;
      }
      if (floats.size() + ints.size() > static_cast<size_t>(limits_.max_elements_per_tensor)) {
        Fail(what + ": more elements than the limit per tensor");
      }
    }
    Check(r, what.c_str());
    int64_t count = 1;
    for (int64_t d : t.dims) {
      if (d < 0 || d > limits_.max_dim) Fail(what + ": dim " + std::to_string(d) + " out of range");
      count *= d;
    }
    if (count > limits_.max_elements_per_tensor) Fail(what + ": more elements than the limit");
    auto n = static_cast<size_t>(count);
    if (t.type == f::kFloat) {
      if (have_raw) {
        if (raw.size() != 4 * n) Fail(what + ": raw_data size does not match the dims");
        t.floats.resize(n);
        if (n) std::memcpy(t.floats.data(), raw.data(), 4 * n);
      } else {
        if (floats.size() != n) Fail(what + ": float_data size does not match the dims");
        t.floats = std::move(floats);
      }
    } else if (t.type == f::kInt64) {
      if (have_raw) {
        if (raw.size() != 8 * n) Fail(what + ": raw_data size does not match the dims");
        t.ints.resize(n);
        if (n) std::memcpy(t.ints.data(), raw.data(), 8 * n);
      } else {
        if (ints.size() != n) Fail(what + ": int64_data size does not match the dims");
        t.ints = std::move(ints);
      }
    } else {
      Fail(what + ": data type " + std::to_string(t.type) + " (only FLOAT and INT64 constants)");
    }
    return t;
  }

  OValue DecodeValueInfo(std::string_view bytes) const {
    OValue v;
    pb::Reader r(bytes);
    while (r.Next()) {
      if (r.field() == f::kValueInfoName) v.name = std::string(r.bytes());
      if (r.field() != f::kValueInfoType) continue;
      pb::Reader type(r.bytes());
      while (type.Next()) {
        if (type.field() != f::kTypeTensorType) continue;
        pb::Reader tensor(type.bytes());
        while (tensor.Next()) {
          if (tensor.field() == f::kTypeTensorElemType && tensor.varint() != f::kFloat) {
            Fail("value '" + v.name + "' is not float32");
          }
          if (tensor.field() != f::kTypeTensorShape) continue;
          pb::Reader shape(tensor.bytes());
          while (shape.Next()) {
            if (shape.field() != f::kShapeDim) continue;
            pb::Reader dim(shape.bytes());
            bool has_value = false;
            while (dim.Next()) {
              if (dim.field() == f::kDimValue) {
                v.dims.push_back(static_cast<int64_t>(dim.varint()));
                has_value = true;
              }
            }
            Check(dim, "dimension");
            if (!has_value) v.static_shape = false;
            if (v.dims.size() > 4) v.static_shape = false;
          }
          Check(shape, "shape");
        }
        Check(tensor, "tensor type");
      }
      Check(type, "type");
    }
    Check(r, "value info");
    return v;
  }

  ONode DecodeNode(std::string_view bytes) const {
    ONode n;
    pb::Reader r(bytes);
    while (r.Next()) {
      switch (r.field()) {
        case f::kNodeInput:
          n.inputs.emplace_back(r.bytes());
          break;
        case f::kNodeOutput:
          n.outputs.emplace_back(r.bytes());
          break;
        case f::kNodeName:
          n.name = std::string(r.bytes());
          break;
        case f::kNodeOpType:
          n.op_type = std::string(r.bytes());
          break;
        case f::kNodeDomain:
          n.domain = std::string(r.bytes());
          break;
        case f::kNodeAttribute: {
          OAttr a;
          std::string name;
          pb::Reader ar(r.bytes());
          while (ar.Next()) {
            switch (ar.field()) {
              case f::kAttrName:
                name = std::string(ar.bytes());
                break;
              case f::kAttrType:
                a.type = static_cast<int>(ar.varint());
                break;
              case f::kAttrF: {
                uint32_t bits = ar.fixed32();
                std::memcpy(&a.f, &bits, 4);
                break;
              }
              case f::kAttrI:
                a.i = static_cast<int64_t>(ar.varint());
                break;
              case f::kAttrS:
                a.s = std::string(ar.bytes().substr(0, 256));
                break;
              case f::kAttrT:
                a.t = std::string(ar.bytes());
                break;
              case f::kAttrInts:
                if (ar.wire_type() == pb::WireType::kVarint) {
                  a.ints.push_back(static_cast<int64_t>(ar.varint()));
                } else {
                  bool ok = true;
                  for (int64_t v : Varints(ar.bytes(), &ok)) a.ints.push_back(v);
                  if (!ok) Fail("malformed ints attribute");
                }
                if (a.ints.size() > 64) Fail("attribute '" + name + "' has over 64 ints");
                break;
              default:
                break;
            }
          }
          Check(ar, "attribute");
          n.attrs[name] = std::move(a);
          break;
        }
        default:
          break;
      }
    }
    Check(r, "node");
    return n;
  }

  void DecodeModel(std::string_view bytes) {
    pb::Reader m(bytes);
    bool have_graph = false;
    while (m.Next()) {
      if (m.field() == f::kModelMetadataProps) {
        std::string key, value;
        pb::Reader e(m.bytes());
        while (e.Next()) {
          if (e.field() == f::kEntryKey) key = std::string(e.bytes());
          if (e.field() == f::kEntryValue) value = std::string(e.bytes());
        }
        Check(e, "metadata");
        metadata_[key] = value;
      }
      if (m.field() != f::kModelGraph) continue;
      have_graph = true;
      pb::Reader g(m.bytes());
      while (g.Next()) {
        switch (g.field()) {
          case f::kGraphNode:
            if (static_cast<int64_t>(nodes_.size()) >= limits_.max_nodes) {
              Fail("more than " + std::to_string(limits_.max_nodes) + " nodes");
            }
            nodes_.push_back(DecodeNode(g.bytes()));
            break;
          case f::kGraphInitializer: {
            std::string name;
            pb::Reader t(g.bytes());
            while (t.Next()) {
              if (t.field() == f::kTensorName) name = std::string(t.bytes());
            }
            consts_[name] = DecodeTensor(g.bytes(), "initializer '" + name + "'");
            break;
          }
          case f::kGraphInput:
            inputs_.push_back(DecodeValueInfo(g.bytes()));
            break;
          case f::kGraphOutput:
            outputs_.push_back(DecodeValueInfo(g.bytes()).name);
            break;
          default:
            break;
        }
      }
      Check(g, "graph");
    }
    Check(m, "model (not an ONNX ModelProto?)");
    if (!have_graph) Fail("no graph in the model (not an ONNX ModelProto?)");
  }

  void AddConstant(const ONode& n) {
    if (n.outputs.size() != 1) FailNode(n, "expected one output");
    auto it = n.attrs.find("value");
    if (it != n.attrs.end()) {
      consts_[n.outputs[0]] = DecodeTensor(it->second.t, NodeWhere(n) + " value");
    } else if ((it = n.attrs.find("value_float")) != n.attrs.end()) {
      consts_[n.outputs[0]] = OTensor{{}, f::kFloat, {it->second.f}, {}};
    } else if ((it = n.attrs.find("value_ints")) != n.attrs.end()) {
      consts_[n.outputs[0]] =
          OTensor{{static_cast<int64_t>(it->second.ints.size())}, f::kInt64, {}, it->second.ints};
    } else {
      FailNode(n, "only value, value_float and value_ints constants are supported");
    }
  }

  const Shape& ShapeOf(const std::string& v, const ONode& n) const {
    auto it = shapes_.find(v);
    if (it == shapes_.end()) FailNode(n, "input '" + v + "' is not a graph input or node output");
    return it->second;
  }

  const OTensor* Const(const ONode& n, size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
    auto it = consts_.find(n.inputs[i]);
    return it == consts_.end() ? nullptr : &it->second;
  }
  const OTensor& NeedConst(const ONode& n, size_t i, const char* what) const {
    const OTensor* t = Const(n, i);
    if (!t)
      FailNode(n, std::string(what) + " (input " + std::to_string(i) + ") must be a constant");
    return *t;
  }
  Tensor FloatParam(const ONode& n, size_t i, const char* what) const {
    const OTensor& t = NeedConst(n, i, what);
    if (t.type != f::kFloat) FailNode(n, std::string(what) + " must be float");
    return Tensor(t.dims.empty() ? Shape{1} : t.dims, t.floats);
  }
  double Scalar(const ONode& n, size_t i, const char* what, double absent) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return absent;
    const OTensor& t = NeedConst(n, i, what);
    if (t.type != f::kFloat || t.floats.size() != 1) FailNode(n, std::string(what) + ": one float");
    return t.floats[0];
  }
  double AttrF(const ONode& n, const char* name, double def) const {
    auto it = n.attrs.find(name);
    return it == n.attrs.end() ? def : it->second.f;
  }
  int64_t AttrI(const ONode& n, const char* name, int64_t def) const {
    auto it = n.attrs.find(name);
    return it == n.attrs.end() ? def : it->second.i;
  }
  std::vector<int64_t> AttrInts(const ONode& n, const char* name, std::vector<int64_t> def) const {
    auto it = n.attrs.find(name);
    return it == n.attrs.end() ? def : it->second.ints;
  }
  std::string AttrS(const ONode& n, const char* name, const std::string& def) const {
    auto it = n.attrs.find(name);
    return it == n.attrs.end() ? def : it->second.s;
  }

  // Explicit [t, l, b, r] pads of a conv or pool, from pads or auto_pad.
  std::vector<int64_t> Pads(const ONode& n, const Shape& x, const std::vector<int64_t>& k,
                            const std::vector<int64_t>& s, const std::vector<int64_t>& d) const {
    std::string auto_pad = AttrS(n, "auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
      auto p = AttrInts(n, "pads", {0, 0, 0, 0});
      if (p.size() != 4) FailNode(n, "pads must have 4 entries (2-D only)");
      return p;
    }
    if (auto_pad == "VALID") return {0, 0, 0, 0};
    if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
      FailNode(n, "unknown auto_pad \"" + auto_pad + "\"");
    }
    std::vector<int64_t> begin(2), end(2);
    for (int i = 0; i < 2; ++i) {
      int64_t in = x[2 + i];
      int64_t out = (in + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in);
      int64_t small = total / 2;
      begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      end[i] = total - begin[i];
    }
    return {begin[0], begin[1], end[0], end[1]};
  }

  Node Convert(const ONode& on) {
    if (!on.domain.empty() && on.domain != "ai.onnx") {
      FailNode(on, "domain \"" + on.domain + "\" is not in fusefuzz's vocabulary");
    }
    size_t real_outputs = 0;
    for (const auto& o : on.outputs) real_outputs += !o.empty();
    if (on.outputs.empty() || on.outputs[0].empty() || real_outputs != 1) {
      FailNode(on, "fusefuzz ops have exactly one output");
    }
    Node n;
    n.output = on.outputs[0];
    const std::string& t = on.op_type;
    auto value_input = [&](size_t i) {
      if (i >= on.inputs.size() || consts_.count(on.inputs[i])) {
        FailNode(on, "input " + std::to_string(i) + " must be a value, not a constant");
      }
      n.inputs.push_back(on.inputs[i]);
    };
    auto unary = [&](Op op) {
      n.op = op;
      value_input(0);
    };
    if (t == "Conv") {
      n.op = Op::Conv;
      value_input(0);
      n.params["W"] = FloatParam(on, 1, "W");
      if (Const(on, 2)) n.params["B"] = FloatParam(on, 2, "B");
      const Shape& w = n.params["W"].shape;
      if (w.size() != 4) FailNode(on, "only 2-D convolutions (rank-4 W)");
      auto s = AttrInts(on, "strides", {1, 1});
      auto d = AttrInts(on, "dilations", {1, 1});
      n.attrs["strides"] = s;
      n.attrs["dilations"] = d;
      n.attrs["pads"] = Pads(on, ShapeOf(on.inputs[0], on), {w[2], w[3]}, s, d);
      n.attrs["group"] = AttrI(on, "group", 1);
    } else if (t == "MaxPool" || t == "AveragePool") {
      n.op = t == "MaxPool" ? Op::MaxPool : Op::AvgPool;
      value_input(0);
      auto k = AttrInts(on, "kernel_shape", {});
      if (k.size() != 2) FailNode(on, "kernel_shape must have 2 entries (2-D only)");
      auto s = AttrInts(on, "strides", {1, 1});
      auto d = AttrInts(on, "dilations", {1, 1});
      if (d != std::vector<int64_t>{1, 1}) FailNode(on, "dilated pools are not in fusefuzz");
      n.attrs["kernel_shape"] = k;
      n.attrs["strides"] = s;
      n.attrs["pads"] = Pads(on, ShapeOf(on.inputs[0], on), k, s, d);
      n.attrs["ceil_mode"] = AttrI(on, "ceil_mode", 0);
      if (n.op == Op::AvgPool) n.attrs["count_include_pad"] = AttrI(on, "count_include_pad", 0);
    } else if (t == "BatchNormalization") {
      n.op = Op::BatchNorm;
      value_input(0);
      if (AttrI(on, "training_mode", 0) != 0) FailNode(on, "only inference (training_mode 0)");
      n.params["scale"] = FloatParam(on, 1, "scale");
      n.params["bias"] = FloatParam(on, 2, "B");
      n.params["mean"] = FloatParam(on, 3, "mean");
      n.params["var"] = FloatParam(on, 4, "var");
      n.attrs["epsilon"] = AttrF(on, "epsilon", 1e-5f);
    } else if (t == "LayerNormalization") {
      n.op = Op::LayerNorm;
      value_input(0);
      if (AttrI(on, "stash_type", 1) != 1) FailNode(on, "only stash_type 1 (float)");
      n.params["scale"] = FloatParam(on, 1, "scale");
      n.params["bias"] = FloatParam(on, 2, "B");
      n.attrs["axis"] = AttrI(on, "axis", -1);
      n.attrs["epsilon"] = AttrF(on, "epsilon", 1e-5f);
    } else if (t == "InstanceNormalization") {
      n.op = Op::InstanceNorm;
      value_input(0);
      n.params["scale"] = FloatParam(on, 1, "scale");
      n.params["bias"] = FloatParam(on, 2, "B");
      n.attrs["epsilon"] = AttrF(on, "epsilon", 1e-5f);
    } else if (t == "Relu") {
      unary(Op::Relu);
    } else if (t == "Sigmoid") {
      unary(Op::Sigmoid);
    } else if (t == "Tanh") {
      unary(Op::Tanh);
    } else if (t == "HardSwish") {
      unary(Op::HardSwish);
    } else if (t == "Identity") {
      unary(Op::Identity);
    } else if (t == "GlobalAveragePool") {
      unary(Op::GlobalAvgPool);
    } else if (t == "Clip") {
      value_input(0);
      const float lowest = std::numeric_limits<float>::lowest();
      const float highest = std::numeric_limits<float>::max();
      double lo = on.attrs.count("min") ? AttrF(on, "min", lowest) : Scalar(on, 1, "min", lowest);
      double hi = on.attrs.count("max") ? AttrF(on, "max", highest) : Scalar(on, 2, "max", highest);
      auto meta = metadata_.find("fusefuzz:decomposition:" + on.name);
      if (lo == 0 && hi == 6 && meta != metadata_.end() && meta->second.rfind("Relu6", 0) == 0) {
        n.op = Op::Relu6;  // fusefuzz's own export of Relu6
      } else {
        n.op = Op::Clip;
        n.attrs["min"] = lo;
        n.attrs["max"] = hi;
      }
    } else if (t == "LeakyRelu") {
      unary(Op::LeakyRelu);
      n.attrs["alpha"] = AttrF(on, "alpha", 0.01f);
    } else if (t == "Elu") {
      unary(Op::Elu);
      n.attrs["alpha"] = AttrF(on, "alpha", 1.0f);
    } else if (t == "HardSigmoid") {
      unary(Op::HardSigmoid);
      n.attrs["alpha"] = AttrF(on, "alpha", 0.2f);
      n.attrs["beta"] = AttrF(on, "beta", 0.5f);
    } else if (t == "PRelu") {
      unary(Op::PRelu);
      Tensor slope = FloatParam(on, 1, "slope");
      // Per channel: [C, 1, ..., 1] (fusefuzz's export), or one value.
      const Shape& x = ShapeOf(on.inputs[0], on);
      int64_t count = NumElements(slope.shape);
      bool trailing_ones = true;
      for (size_t i = 1; i < slope.shape.size(); ++i) trailing_ones &= slope.shape[i] == 1;
      bool per_channel =
          x.size() >= 2 && count == x[1] && trailing_ones && slope.shape.size() == x.size() - 1;
      if (count == 1) {
        slope.shape = {1};
      } else if (per_channel) {
        slope.shape = {count};
      } else {
        FailNode(on, "slope of shape " + ShapeToString(slope.shape) +
                         " is not per channel ([C, 1, 1]) or a single value");
      }
      n.params["slope"] = std::move(slope);
    } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
      n.op = t == "Add" ? Op::Add : t == "Sub" ? Op::Sub : t == "Mul" ? Op::Mul : Op::Div;
      if (on.inputs.size() != 2) FailNode(on, "expected 2 inputs");
      if (Const(on, 0) && Const(on, 1)) FailNode(on, "both operands are constants");
      for (size_t i = 0; i < 2; ++i) {
        if (Const(on, i)) {
          n.params[i == 0 ? "A" : "B"] = FloatParam(on, i, i == 0 ? "A" : "B");
        } else {
          value_input(i);
        }
      }
    } else if (t == "Pad") {
      n.op = Op::Pad;
      value_input(0);
      std::string mode = AttrS(on, "mode", "constant");
      if (mode != "constant" && mode != "reflect") FailNode(on, "mode \"" + mode + "\"");
      std::vector<int64_t> p;
      double value = 0;
      if (on.attrs.count("pads")) {  // opset < 11
        p = AttrInts(on, "pads", {});
        value = AttrF(on, "value", 0);
      } else {
        const OTensor& pads = NeedConst(on, 1, "pads");
        if (pads.type != f::kInt64) FailNode(on, "pads must be int64");
        p = pads.ints;
        value = Scalar(on, 2, "constant_value", 0);
        if (on.inputs.size() > 3 && !on.inputs[3].empty()) FailNode(on, "axes are not supported");
      }
      if (p.size() != 8 || p[0] || p[1] || p[4] || p[5]) {
        FailNode(on, "only padding of H and W of a rank-4 tensor");
      }
      n.attrs["pads"] = std::vector<int64_t>{p[2], p[3], p[6], p[7]};
      n.attrs["mode"] = mode;
      n.attrs["value"] = value;
    } else if (t == "Concat") {
      n.op = Op::Concat;
      for (size_t i = 0; i < on.inputs.size(); ++i) value_input(i);
      int64_t axis = AttrI(on, "axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(ShapeOf(on.inputs.at(0), on).size());
      n.attrs["axis"] = axis;
    } else {
      FailNode(on, "not in fusefuzz's vocabulary (see `fusefuzz list ops`)");
    }
    return n;
  }

  std::string src_;
  Limits limits_;
  std::vector<ONode> nodes_;
  std::vector<OValue> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, OTensor> consts_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, Shape> shapes_;
};

}  // namespace

Graph ImportOnnx(std::string_view model_bytes, const std::string& source, const Limits& limits) {
  return Importer(source, limits).Run(model_bytes);
}

Graph ImportOnnxFile(const std::string& path, const Limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  auto size = static_cast<int64_t>(in.tellg());
  if (size < 0 || size > (int64_t{1} << 31)) throw InputError(path, "file larger than 2 GiB");
  in.seekg(0);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (!in) throw InputError(path, "read error");
  return ImportOnnx(bytes, path, limits);
}

}  // namespace fusefuzz
