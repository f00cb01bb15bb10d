// The quantized part of the ONNX export: QDQ form (onnx/export_quant.h, docs/onnx.md).
#include "onnx/export_quant.h"

#include <cmath>

#include "ir/error.h"
#include "onnx/node_builder.h"

namespace fusefuzz {
namespace {

onnx::TensorProto::DataType OnnxType(QuantType t) {
  switch (t) {
    case QuantType::kUint8:
      return onnx::TensorProto::UINT8;
    case QuantType::kInt8:
      return onnx::TensorProto::INT8;
    case QuantType::kInt32:
      return onnx::TensorProto::INT32;
  }
  return onnx::TensorProto::UNDEFINED;
}

// Ops that ONNX runs on uint8/int8 tensors as they are (type-generic, exact on integers). A
// constant Pad only with a value that is an integer of the type (ONNX's constant_value has the
// data's type); other modes copy elements.
bool PassesIntegers(const Node& n, QuantType t) {
  if (n.op == Op::Pad) {
    if (AttrString(n, "mode") != "constant") return true;
    const double v = AttrFloat(n, "value");
    return v == std::nearbyint(v) && v >= double(QMin(t)) && v <= double(QMax(t));
  }
  return n.op == Op::Identity || n.op == Op::Reshape || n.op == Op::Flatten ||
         n.op == Op::MaxPool || n.op == Op::Concat;
}

}  // namespace

QuantExport::QuantExport(const Graph& g, onnx::GraphProto* graph,
                         std::set<std::string>* used_values, std::set<std::string>* used_nodes,
                         std::map<const Tensor*, std::string>* initializer_of)
    : g_(g),
      graph_(graph),
      used_values_(used_values),
      used_nodes_(used_nodes),
      initializer_of_(initializer_of),
      outputs_(g.outputs.begin(), g.outputs.end()) {
  for (const Node& n : g.nodes) {
    if (ProducesQuantized(n.op)) {
      type_[n.output] = n.quant.at("y").type;
    } else if (!n.inputs.empty() && type_.count(n.inputs[0]) &&
               PassesIntegers(n, type_.at(n.inputs[0]))) {
      auto first = type_.find(n.inputs[0]);
      bool same = first != type_.end();
      for (const std::string& in : n.inputs) {
        auto it = type_.find(in);
        same = same && it != type_.end() && it->second == first->second;  // mixed Concat: float
      }
      if (same) type_[n.output] = first->second;
    }
  }
}

std::optional<QuantType> QuantExport::TypeOf(const std::string& v) const {
  auto it = type_.find(v);
  if (it == type_.end()) return std::nullopt;
  return it->second;
}

std::string QuantExport::Fresh(const std::string& base) { return FreshName(used_values_, base); }

std::string QuantExport::NodeName(const Node& n, const std::string& what) {
  return FreshName(used_nodes_, n.name + "/" + what);
}

std::string QuantExport::AsFloat(const std::string& v) {
  if (!TypeOf(v) || outputs_.count(v)) return v;  // a graph output is Cast under its own name
  std::string& cast = casts_[v + "/float"];
  if (cast.empty()) {
    cast = Fresh(v + "/float");
    *graph_->add_node() = NodeBuilder("Cast", FreshName(used_nodes_, v + "/to_float"))
                              .In(int_name_.count(v) ? int_name_.at(v) : v)
                              .Out(cast)
                              .AttrI("to", onnx::TensorProto::FLOAT)
                              .node();
  }
  return cast;
}

std::string QuantExport::AsInt(const std::string& v, QuantType type, const Node& reader) {
  const std::optional<QuantType> t = TypeOf(v);
  if (t == type) return int_name_.count(v) ? int_name_.at(v) : v;
  const std::string where = "node '" + reader.name + "' (" + std::string(OpName(reader.op)) + ")";
  if (t) {
    throw InputError(where, "reads '" + v + "' as " + std::string(QuantTypeName(type)) +
                                " but it holds " + std::string(QuantTypeName(*t)) +
                                ": ONNX has no exact form for that");
  }
  bool graph_input = false;
  for (const ValueInfo& in : g_.inputs) graph_input = graph_input || in.name == v;
  if (!graph_input) {
    throw InputError(where, "reads '" + v +
                                "', a float value computed in the graph, as integers: ONNX's "
                                "integer inputs come from QuantizeLinear (or a graph input)");
  }
  const std::string tn(QuantTypeName(type));
  std::string& cast = casts_[v + "/" + tn];
  if (cast.empty()) {
    cast = Fresh(v + "/" + tn);
    *graph_->add_node() = NodeBuilder("Cast", FreshName(used_nodes_, v + "/to_" + tn))
                              .In(v)
                              .Out(cast)
                              .AttrI("to", OnnxType(type))
                              .node();
  }
  return cast;
}

Node QuantExport::MapNames(const Node& n) {
  Node m = n;
  // The inputs that hold integers in ONNX, by their quantization role.
  auto int_role = [&](size_t i) -> const char* {
    if (n.op == Op::DequantizeLinear) return "x";
    if (n.op == Op::QLinearConv) return i == 0 ? "x" : "r";
    if (n.op == Op::QLinearAdd) return i == 0 ? "a" : "b";
    return nullptr;
  };
  // A pass-through op on integers (Identity, Reshape, Flatten, MaxPool, Concat, Pad).
  const bool pass = !ProducesQuantized(n.op) && TypeOf(n.output).has_value();
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string& v = n.inputs[i];
    if (const char* role = int_role(i)) {
      m.inputs[i] = AsInt(v, n.quant.at(role).type, n);
    } else if (pass) {
      m.inputs[i] = int_name_.count(v) ? int_name_.at(v) : v;
    } else {
      m.inputs[i] = AsFloat(v);
    }
  }
  if (TypeOf(n.output) && outputs_.count(n.output)) {
    m.output = int_name_[n.output] =
        Fresh(n.output + "/" + std::string(QuantTypeName(*TypeOf(n.output))));
  }
  return m;
}

void QuantExport::AfterNode(const Node& n) {
  if (!TypeOf(n.output) || !outputs_.count(n.output)) return;
  *graph_->add_node() = NodeBuilder("Cast", NodeName(n, "to_float"))
                            .In(int_name_.at(n.output))
                            .Out(n.output)
                            .AttrI("to", onnx::TensorProto::FLOAT)
                            .node();
}

std::optional<QuantType> QuantExport::IntegerPadType(const Node& n) const {
  if (n.op != Op::Pad || n.inputs.empty()) return std::nullopt;
  // n is mapped (MapNames): find the original by name.
  for (const Node& o : g_.nodes) {
    if (o.name == n.name) return TypeOf(o.output);
  }
  return std::nullopt;
}

std::string QuantExport::IntScalar(const std::string& name, double v, QuantType type) {
  return IntInitializer(name, {}, {static_cast<int64_t>(v)}, type);
}

std::string QuantExport::IntInitializer(const std::string& name, const Shape& dims,
                                        const std::vector<int64_t>& q, QuantType type) {
  std::string v = Fresh(name);
  onnx::TensorProto* t = graph_->add_initializer();
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_type(OnnxType(type));
  t->set_name(v);
  std::string raw;
  for (int64_t x : q) {
    if (type == QuantType::kInt32) {
      const auto u = static_cast<uint32_t>(static_cast<int32_t>(x));
      for (int b = 0; b < 4; ++b) raw += static_cast<char>((u >> (8 * b)) & 0xff);
    } else {
      raw += static_cast<char>(static_cast<uint8_t>(x & 0xff));
    }
  }
  t->set_raw_data(raw);
  return v;
}

std::string QuantExport::FloatScalar(const Node& n, const std::string& what, double v) {
  std::string name = Fresh(n.name + "/" + what);
  onnx::TensorProto* t = graph_->add_initializer();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_name(name);
  const float f = ToF32(v);
  t->set_raw_data(&f, sizeof f);
  return name;
}

std::pair<std::string, std::string> QuantExport::ScaleZero(const Node& n, const std::string& what,
                                                           const QuantParams& q) {
  Shape dims;
  if (q.PerAxis()) dims.push_back(static_cast<int64_t>(q.scale.size()));
  std::string s = Fresh(n.name + "/" + what + "_scale");
  onnx::TensorProto* t = graph_->add_initializer();
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_name(s);
  std::vector<float> f;
  for (double x : q.scale) f.push_back(ToF32(x));
  t->set_raw_data(f.data(), f.size() * sizeof(float));
  std::string z = IntInitializer(n.name + "/" + what + "_zero_point", dims, q.zero_point, q.type);
  return {s, z};
}

std::string QuantExport::Dequantize(const Node& n, const std::string& what, const std::string& x,
                                    const QuantParams& q) {
  auto [s, z] = ScaleZero(n, what, q);
  std::string y = Fresh(n.name + "/" + what);
  NodeBuilder b("DequantizeLinear", NodeName(n, what + "/dequantize"));
  b.In(x).In(s).In(z).Out(y);
  if (q.PerAxis()) b.AttrI("axis", q.axis);
  *graph_->add_node() = b.node();
  return y;
}

void QuantExport::Quantize(const Node& n, const std::string& name, const std::string& x,
                           const std::string& y, const QuantParams& q) {
  auto [s, z] = ScaleZero(n, "y", q);
  NodeBuilder b("QuantizeLinear", name);
  b.In(x).In(s).In(z).Out(y);
  if (q.PerAxis()) b.AttrI("axis", q.axis);
  *graph_->add_node() = b.node();
}

void QuantExport::EmitQuantize(const Node& n) {
  Quantize(n, n.name, n.inputs.at(0), n.output, n.quant.at("y"));
}

void QuantExport::EmitDequantize(const Node& n) {
  const QuantParams& q = n.quant.at("x");
  auto [s, z] = ScaleZero(n, "x", q);
  NodeBuilder b("DequantizeLinear", n.name);
  b.In(n.inputs.at(0)).In(s).In(z).Out(n.output);
  if (q.PerAxis()) b.AttrI("axis", q.axis);
  *graph_->add_node() = b.node();
}

std::string QuantExport::GridParam(const Node& n, const std::string& param, const Tensor& t,
                                   const QuantParams& q) {
  std::vector<int64_t> ints(t.data.size());
  ForEachQuantElement(q, t.shape, [&](size_t i, double s, int64_t z) {
    if (!OnGrid(t.data[i], s, z, q.type, &ints[i])) {
      throw InputError("node '" + n.name + "'", "param '" + param + "' element " +
                                                    std::to_string(i) + " is not on its grid");
    }
  });
  return Dequantize(n, param, IntInitializer(n.name + "." + param, t.shape, ints, q.type), q);
}

// The integers a QLinearConv param holds (the verifier checked they are integers in range).
static std::vector<int64_t> Integers(const Tensor& t) {
  std::vector<int64_t> q;
  q.reserve(t.data.size());
  for (float v : t.data) q.push_back(static_cast<int64_t>(v));
  return q;
}

void QuantExport::EmitQLinearConv(const Node& n) {
  const QuantParams& qx = n.quant.at("x");
  const QuantParams& qw = n.quant.at("w");
  const Tensor& w = n.params.at("W");
  std::string x = Dequantize(n, "x", n.inputs.at(0), qx);
  std::string wi = IntInitializer(n.name + ".W", w.shape, Integers(w), QuantType::kInt8);
  (*initializer_of_)[&w] = wi;
  std::string wf = Dequantize(n, "W", wi, qw);
  ConvAttrs a = GetConvAttrs(n);
  NodeBuilder conv("Conv", NodeName(n, "conv"));
  conv.In(x).In(wf);
  if (auto it = n.params.find("B"); it != n.params.end()) {
    // The bias grid of QDQ models and of ONNX's QLinearConv: int32 at s_x * s_w, zero point 0,
    // the product taken in float32 as quantization tools write it.
    QuantParams qb;
    qb.type = QuantType::kInt32;
    qb.axis = qw.PerAxis() ? 0 : -1;
    qb.scale.clear();
    qb.zero_point.assign(qw.scale.size(), 0);
    for (double sw : qw.scale) qb.scale.push_back(ToF32(qx.scale[0]) * ToF32(sw));
    std::string bi =
        IntInitializer(n.name + ".B", it->second.shape, Integers(it->second), QuantType::kInt32);
    (*initializer_of_)[&it->second] = bi;
    conv.In(Dequantize(n, "B", bi, qb));
  }
  std::string cur = Fresh(n.name + "/conv");
  conv.Out(cur)
      .AttrInts("kernel_shape", {w.shape[2], w.shape[3]})
      .AttrInts("strides", {a.stride_h, a.stride_w})
      .AttrInts("dilations", {a.dilation_h, a.dilation_w})
      .AttrInts("pads", {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right})
      .AttrI("group", a.group);
  *graph_->add_node() = conv.node();
  for (const EpilogueStep& s : n.epilogue) {
    std::string next = Fresh(n.name + "/" + (s.kind == EpilogueKind::kAdd ? "add" : "act"));
    if (s.kind == EpilogueKind::kAdd) {
      std::string r = Dequantize(n, "r", n.inputs.at(1), n.quant.at("r"));
      *graph_->add_node() = NodeBuilder("Add", NodeName(n, "add")).In(cur).In(r).Out(next).node();
    } else if (s.act == Op::Relu) {
      *graph_->add_node() = NodeBuilder("Relu", NodeName(n, "relu")).In(cur).Out(next).node();
    } else {
      const bool six = s.act == Op::Relu6;
      const double lo = six ? 0 : AttrFloat(Op::Clip, s.attrs, "min", n.name);
      const double hi = six ? 6 : AttrFloat(Op::Clip, s.attrs, "max", n.name);
      *graph_->add_node() = NodeBuilder("Clip", NodeName(n, six ? "relu6" : "clip"))
                                .In(cur)
                                .In(FloatScalar(n, "min", lo))
                                .In(FloatScalar(n, "max", hi))
                                .Out(next)
                                .node();
    }
    cur = next;
  }
  Quantize(n, NodeName(n, "quantize"), cur, n.output, n.quant.at("y"));
}

void QuantExport::EmitQLinearAdd(const Node& n) {
  std::string a = Dequantize(n, "a", n.inputs.at(0), n.quant.at("a"));
  std::string b = Dequantize(n, "b", n.inputs.at(1), n.quant.at("b"));
  std::string sum = Fresh(n.name + "/add");
  *graph_->add_node() = NodeBuilder("Add", NodeName(n, "add")).In(a).In(b).Out(sum).node();
  if (AttrString(n, "activation") == "relu") {
    std::string r = Fresh(n.name + "/relu");
    *graph_->add_node() = NodeBuilder("Relu", NodeName(n, "relu")).In(sum).Out(r).node();
    sum = r;
  }
  Quantize(n, NodeName(n, "quantize"), sum, n.output, n.quant.at("y"));
}

}  // namespace fusefuzz
