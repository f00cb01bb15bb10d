// ONNX export (docs/onnx.md has the op mapping table and the reasoning behind each choice).
#include "onnx/export.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/verifier.h"
#include "onnx/export_quant.h"
#include "onnx/export_spellings.h"
#include "onnx/node_builder.h"
#include "onnx/proto_io.h"
#include "onnx/tensor_proto.h"

namespace fusefuzz {
namespace {

class Exporter {
 public:
  Exporter(const Graph& g, const OnnxExportOptions& opts)
      : g_(g), opts_(opts), quant_(g, &graph_, &used_values_, &used_nodes_, &initializer_of_) {
    shapes_ = VerifyGraph(g);
    for (const auto& in : g.inputs) used_values_.insert(in.name);
    for (const Node& n : g.nodes) {
      used_values_.insert(n.output);
      used_nodes_.insert(n.name);
    }
  }

  OnnxModel Run() {
    for (const Node& n : g_.nodes) {
      // The ONNX names it reads and writes (integer values: onnx/export_quant.h).
      const Node m = quant_.MapNames(n);
      const int first = graph_.node_size();
      if (HasOnnxSpelling(n)) {
        EmitSpelled(n, m);
      } else {
        EmitNode(m);
      }
      if (opts_.record_nodes && (IsRecorded(n) || !n.spelling.empty())) RecordNode(n, m, first);
      quant_.AfterNode(n);
    }
    OnnxModel m;
    graph_.set_name(opts_.graph_name);
    for (const auto& in : g_.inputs) {
      ValueInfo(graph_.add_input(), in.name, in.shape);
      m.input_names.push_back(in.name);
    }
    for (const auto& out : g_.outputs) {
      ValueInfo(graph_.add_output(), out, shapes_.at(out));
      m.output_names.push_back(out);
    }
    m.metadata.emplace_back("fusefuzz:format", "fusefuzz-onnx-export 1 (docs/onnx.md)");
    m.metadata.emplace_back("fusefuzz:version", FUSEFUZZ_VERSION);
    for (auto& kv : decompositions_) m.metadata.push_back(std::move(kv));

    onnx::ModelProto model;
    m.opset = RequiredOnnxOpset(g_);
    model.set_ir_version(m.opset > kOnnxOpset ? kOnnxIrVersionNewer : kOnnxIrVersion);
    model.set_producer_name("fusefuzz");
    model.set_producer_version(FUSEFUZZ_VERSION);
    if (!opts_.doc.empty()) model.set_doc_string(opts_.doc);
    *model.mutable_graph() = std::move(graph_);
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(m.opset);
    for (const auto& [k, v] : m.metadata) {
      onnx::StringStringEntryProto* e = model.add_metadata_props();
      e->set_key(k);
      e->set_value(v);
    }
    m.bytes = SerializeProto(model);
    return m;
  }

 private:
  static void ValueInfo(onnx::ValueInfoProto* vi, const std::string& name, const Shape& shape) {
    vi->set_name(name);
    onnx::TypeProto::Tensor* tensor = vi->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    onnx::TensorShapeProto* dims = tensor->mutable_shape();
    for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
  }

  // A name not used by any value of the graph nor by an earlier fresh name.
  static std::string Fresh(std::set<std::string>* used, const std::string& base) {
    return FreshName(used, base);
  }
  std::string Value(const Node& n, const std::string& what) {
    return Fresh(&used_values_, n.name + "/" + what);
  }
  std::string NodeName(const Node& n, const std::string& what) {
    return Fresh(&used_nodes_, n.name + "/" + what);
  }

  std::string Initializer(const std::string& name, const Shape& dims,
                          const std::vector<float>& data) {
    std::string v = Fresh(&used_values_, name);
    onnx::TensorProto* t = NewConstant(v);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->set_name(v);
    t->set_raw_data(data.data(), data.size() * sizeof(float));  // little-endian host
    return v;
  }
  std::string Int64Initializer(const std::string& name, const std::vector<int64_t>& data) {
    std::string v = Fresh(&used_values_, name);
    onnx::TensorProto* t = NewConstant(v);
    t->add_dims(static_cast<int64_t>(data.size()));
    t->set_data_type(onnx::TensorProto::INT64);
    t->set_name(v);
    t->set_raw_data(data.data(), data.size() * sizeof(int64_t));
    return v;
  }
  // The tensor of constant `v`: an initializer, or (spelling onnx.constant-nodes) the value of a
  // Constant node written here, before the node that reads it.
  onnx::TensorProto* NewConstant(const std::string& v) {
    if (!constants_as_nodes_) return graph_.add_initializer();
    onnx::NodeProto* c = graph_.add_node();
    c->set_op_type("Constant");
    c->set_name(Fresh(&used_nodes_, v + "/constant"));
    c->add_output(v);
    onnx::AttributeProto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    return a->mutable_t();
  }

  // A node with an ONNX spelling (onnx/export_spellings.h): `n` as it was mapped to its ONNX names
  // (an integer graph output or its input is renamed, onnx/export_quant.h); the shapes are looked
  // up under the graph's own names, those of `original`.
  void EmitSpelled(const Node& original, const Node& n) {
    SpellingExportHooks h;
    h.emit_plain = [&](const Node& m) { EmitNode(m); };
    h.value = [&](const Node& m, const std::string& what) { return Value(m, what); };
    h.node_name = [&](const Node& m, const std::string& what) { return NodeName(m, what); };
    h.floats = [&](const std::string& name, const Shape& dims, const std::vector<float>& data) {
      return Initializer(name, dims, data);
    };
    h.int64s = [&](const std::string& name, const std::vector<int64_t>& data) {
      return Int64Initializer(name, data);
    };
    h.add = [&](const onnx::NodeProto& p) { *graph_.add_node() = p; };
    constants_as_nodes_ = n.spelling == InfoOf(Spelling::kOnnxConstantNodes).name;
    const Shape in = original.inputs.empty() ? Shape{} : shapes_.at(original.inputs[0]);
    EmitOnnxSpelling(n, in, shapes_.at(original.output), h);
    constants_as_nodes_ = false;
  }

  // A rank-0 float constant (broadcasts against anything).
  std::string Scalar(const Node& n, const std::string& what, double value) {
    return Initializer(n.name + "/" + what, {}, {ToF32(value)});
  }
  std::string Param(const Node& n, const std::string& what, const Tensor& t) {
    return initializer_of_[&t] = Initializer(n.name + "." + what, t.shape, t.data);
  }
  // A param of a Conv, FusedConv or Gemm: declared on a grid (n.quant), its integers and a
  // DequantizeLinear (QDQ form); else the float initializer.
  std::string GridOrParam(const Node& n, const std::string& what, const Tensor& t) {
    auto it = n.quant.find(what);
    if (it == n.quant.end()) return Param(n, what, t);
    return quant_.GridParam(n, what, t, it->second);
  }
  // A per-channel [C] tensor reshaped to [C, 1, ..., 1] so that it broadcasts along dim 1 of a
  // tensor of rank `rank` (ONNX broadcasting aligns from the right).
  std::string ChannelParam(const Node& n, const std::string& what, const Tensor& t, size_t rank) {
    Shape dims = t.shape;
    if (t.shape.size() == 1) {
      for (size_t i = 2; i < rank; ++i) dims.push_back(1);
    }
    return initializer_of_[&t] = Initializer(n.name + "." + what, dims, t.data);
  }

  void Add(const NodeBuilder& b) { *graph_.add_node() = b.node(); }

  // Nodes that opset 17 lacks and that are written as a decomposition (Relu6 has its own,
  // older record: "fusefuzz:decomposition:" = "Relu6 = ...").
  static bool IsRecorded(const Node& n) {
    return n.op == Op::FusedConv || n.op == Op::Silu || n.op == Op::Gelu || n.op == Op::GroupNorm ||
           (n.op == Op::Gemm && !n.epilogue.empty()) || n.op == Op::QLinearConv ||
           n.op == Op::QLinearAdd;
  }

  // "fusefuzz:node:<name>": the node as graph JSON, each tensor replaced by the initializer that
  // holds its data, and the ONNX nodes of its decomposition. The import puts the node back in
  // their place (docs/onnx.md, "Decompositions come back as the node"). `m` is n as emitted (the
  // tensors whose initializers were recorded). A param declared on a grid is written as its
  // integers, so the record keeps it inline.
  void RecordNode(const Node& n, const Node& m, int first_onnx_node) {
    Graph one;
    one.nodes.push_back(n);
    nlohmann::json node = GraphToJson(one).at("nodes").at(0);
    // A spelled node's tensors may be written transposed, reshaped or as Constant nodes: its
    // record keeps them inline (the import reads inline tensors as they are).
    if (!n.spelling.empty()) {
      nlohmann::json onnx_nodes = nlohmann::json::array();
      for (int i = first_onnx_node; i < graph_.node_size(); ++i) {
        onnx_nodes.push_back(graph_.node(i).name());
      }
      nlohmann::json record = {{"node", std::move(node)}, {"onnx_nodes", std::move(onnx_nodes)}};
      decompositions_.emplace_back(std::string(kOnnxNodeRecordPrefix) + n.name, record.dump());
      return;
    }
    auto by_reference = [&](nlohmann::json& params, const ParamMap& tensors, bool grids) {
      for (const auto& [name, t] : tensors) {
        if (grids && n.quant.count(name)) continue;
        params[name] = {{"initializer", initializer_of_.at(&t)}, {"shape", t.shape}};
      }
    };
    if (!n.params.empty()) by_reference(node["params"], m.params, n.op != Op::QLinearConv);
    for (size_t i = 0; i < n.epilogue.size(); ++i) {
      if (!n.epilogue[i].params.empty()) {
        by_reference(node["epilogue"][i]["params"], m.epilogue[i].params, false);
      }
    }
    nlohmann::json onnx_nodes = nlohmann::json::array();
    for (int i = first_onnx_node; i < graph_.node_size(); ++i) {
      onnx_nodes.push_back(graph_.node(i).name());
    }
    nlohmann::json record = {{"node", std::move(node)}, {"onnx_nodes", std::move(onnx_nodes)}};
    decompositions_.emplace_back(std::string(kOnnxNodeRecordPrefix) + n.name, record.dump());
  }
  // One metadata key per node: a FusedConv whose epilogue holds a decomposed activation (a
  // GELU) records both under the node's name, joined (ONNX refuses duplicate metadata keys).
  void Record(const Node& n, const std::string& how) {
    const std::string key = "fusefuzz:decomposition:" + n.name;
    for (auto& [k, v] : decompositions_) {
      if (k == key) {
        v += "; " + how;
        return;
      }
    }
    decompositions_.emplace_back(key, how);
  }

  void EmitNode(const Node& n) {
    const std::string& x = n.inputs.empty() ? std::string() : n.inputs[0];
    switch (n.op) {
      case Op::Conv:
        EmitConv(n, n.output);
        return;
      case Op::FusedConv:
        EmitFusedConv(n);
        return;
      case Op::BatchNorm:
        Add(NodeBuilder("BatchNormalization", n.name)
                .In(x)
                .In(Param(n, "scale", n.params.at("scale")))
                .In(Param(n, "bias", n.params.at("bias")))
                .In(Param(n, "mean", n.params.at("mean")))
                .In(Param(n, "var", n.params.at("var")))
                .Out(n.output)
                .AttrF("epsilon", AttrFloat(n, "epsilon")));
        return;
      case Op::LayerNorm:
        Add(NodeBuilder("LayerNormalization", n.name)
                .In(x)
                .In(Param(n, "scale", n.params.at("scale")))
                .In(Param(n, "bias", n.params.at("bias")))
                .Out(n.output)
                .AttrI("axis", AttrInt(n, "axis"))
                .AttrF("epsilon", AttrFloat(n, "epsilon"))
                .AttrI("stash_type", 1));
        return;
      case Op::GroupNorm:
        EmitGroupNorm(n);
        return;
      case Op::InstanceNorm:
        Add(NodeBuilder("InstanceNormalization", n.name)
                .In(x)
                .In(Param(n, "scale", n.params.at("scale")))
                .In(Param(n, "bias", n.params.at("bias")))
                .Out(n.output)
                .AttrF("epsilon", AttrFloat(n, "epsilon")));
        return;
      case Op::Relu:
      case Op::Relu6:
      case Op::Clip:
      case Op::LeakyRelu:
      case Op::PRelu:
      case Op::Elu:
      case Op::Sigmoid:
      case Op::HardSigmoid:
      case Op::Tanh:
      case Op::Silu:
      case Op::HardSwish:
      case Op::Gelu:
        EmitActivation(n, n.op, n.attrs, n.params, x, n.output, n.name);
        return;
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Min:
      case Op::Max:
        EmitBinary(n);
        return;
      case Op::Pad:
        EmitPad(n);
        return;
      case Op::MaxPool:
      case Op::AvgPool: {
        PoolAttrs a = GetPoolAttrs(n);
        NodeBuilder b(n.op == Op::MaxPool ? "MaxPool" : "AveragePool", n.name);
        b.In(x).Out(n.output);
        b.AttrInts("kernel_shape", {a.kernel_h, a.kernel_w});
        b.AttrInts("strides", {a.stride_h, a.stride_w});
        b.AttrInts("pads", {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right});
        if (a.dilation_h != 1 || a.dilation_w != 1) {
          // AveragePool has dilations from opset 19: such a graph is exported at opset 19.
          b.AttrInts("dilations", {a.dilation_h, a.dilation_w});
        }
        b.AttrI("ceil_mode", a.ceil_mode ? 1 : 0);
        if (n.op == Op::AvgPool) b.AttrI("count_include_pad", a.count_include_pad ? 1 : 0);
        Add(b);
        return;
      }
      case Op::GlobalAvgPool:
        Add(NodeBuilder("GlobalAveragePool", n.name).In(x).Out(n.output));
        return;
      case Op::Concat: {
        NodeBuilder b("Concat", n.name);
        for (const auto& in : n.inputs) b.In(in);
        Add(b.Out(n.output).AttrI("axis", AttrInt(n, "axis")));
        return;
      }
      case Op::Identity:
        Add(NodeBuilder("Identity", n.name).In(x).Out(n.output));
        return;
      case Op::Flatten:
        Add(NodeBuilder("Flatten", n.name).In(x).Out(n.output).AttrI("axis", AttrInt(n, "axis")));
        return;
      case Op::Reshape:
        Add(NodeBuilder("Reshape", n.name)
                .In(x)
                .In(Int64Initializer(n.name + "/shape", AttrInts(n, "shape")))
                .Out(n.output));
        return;
      case Op::MatMul:
        Add(NodeBuilder("MatMul", n.name).In(x).In(Param(n, "B", n.params.at("B"))).Out(n.output));
        return;
      case Op::Gemm:
        EmitGemm(n);
        return;
      case Op::QuantizeLinear:
        quant_.EmitQuantize(n);
        return;
      case Op::DequantizeLinear:
        quant_.EmitDequantize(n);
        return;
      case Op::QLinearConv:
        quant_.EmitQLinearConv(n);
        Record(n,
               "QLinearConv = DequantizeLinear, Conv(DequantizeLinear W, B), [Add(DequantizeLinear "
               "r)], [activation], QuantizeLinear");
        return;
      case Op::QLinearAdd:
        quant_.EmitQLinearAdd(n);
        Record(n,
               "QLinearAdd = Add(DequantizeLinear a, DequantizeLinear b), [Relu], QuantizeLinear");
        return;
      case Op::ReduceMean: {
        // Opset 18 moved `axes` from an attribute to an input.
        NodeBuilder b("ReduceMean", n.name);
        b.In(x);
        if (RequiredOnnxOpset(g_) >= 18) {
          b.In(Int64Initializer(n.name + "/axes", AttrInts(n, "axes")));
        } else {
          b.AttrInts("axes", AttrInts(n, "axes"));
        }
        Add(b.Out(n.output).AttrI("keepdims", AttrInt(n, "keepdims")));
        return;
      }
      case Op::Pow:
        Add(NodeBuilder("Pow", n.name)
                .In(x)
                .In(Scalar(n, "exponent", AttrFloat(n, "exponent")))
                .Out(n.output));
        return;
      case Op::Sqrt:
      case Op::Reciprocal:
      case Op::Exp:
      case Op::Log:
      case Op::Erf:
        Add(NodeBuilder(std::string(OpName(n.op)), n.name).In(x).Out(n.output));
        return;
      case Op::ReduceSum:
      case Op::ReduceMax: {
        // `axes` became an input at opset 13 for ReduceSum, at 18 for ReduceMax.
        NodeBuilder b(std::string(OpName(n.op)), n.name);
        b.In(x);
        if (n.op == Op::ReduceSum || RequiredOnnxOpset(g_) >= 18) {
          b.In(Int64Initializer(n.name + "/axes", AttrInts(n, "axes")));
        } else {
          b.AttrInts("axes", AttrInts(n, "axes"));
        }
        Add(b.Out(n.output).AttrI("keepdims", AttrInt(n, "keepdims")));
        return;
      }
      case Op::Softmax:
        // Opset 13 semantics (one axis); every export is at opset >= 17.
        Add(NodeBuilder("Softmax", n.name).In(x).Out(n.output).AttrI("axis", AttrInt(n, "axis")));
        return;
      case Op::Transpose:
        Add(NodeBuilder("Transpose", n.name)
                .In(x)
                .Out(n.output)
                .AttrInts("perm", AttrInts(n, "perm")));
        return;
    }
    throw InputError("node '" + n.name + "'", "op without an ONNX export");
  }

  // Conv of node n (Conv or FusedConv) from n.inputs[0] into `out`.
  void EmitConv(const Node& n, const std::string& out) {
    ConvAttrs a = GetConvAttrs(n);
    const Tensor& w = n.params.at("W");
    NodeBuilder b("Conv", n.op == Op::Conv ? n.name : NodeName(n, "conv"));
    b.In(n.inputs[0]).In(GridOrParam(n, "W", w));
    if (auto it = n.params.find("B"); it != n.params.end()) b.In(GridOrParam(n, "B", it->second));
    b.Out(out);
    b.AttrInts("kernel_shape", {w.shape[2], w.shape[3]});
    b.AttrInts("strides", {a.stride_h, a.stride_w});
    b.AttrInts("dilations", {a.dilation_h, a.dilation_w});
    b.AttrInts("pads", {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right});
    b.AttrI("group", a.group);
    Add(b);
  }

  void EmitFusedConv(const Node& n) {
    std::string how = "Conv";
    std::string cur = n.epilogue.empty() ? n.output : Value(n, "conv");
    EmitConv(n, cur);
    for (size_t i = 0; i < n.epilogue.size(); ++i) {
      const EpilogueStep& s = n.epilogue[i];
      const bool last = i + 1 == n.epilogue.size();
      const std::string step = "step" + std::to_string(i);
      std::string next = last ? n.output : Value(n, step);
      switch (s.kind) {
        case EpilogueKind::kScaleShift: {
          std::string scaled = Value(n, step + "/scaled");
          Add(NodeBuilder("Mul", NodeName(n, step + "/scale"))
                  .In(cur)
                  .In(ChannelParam(n, step + ".scale", s.params.at("scale"), 4))
                  .Out(scaled));
          Add(NodeBuilder("Add", NodeName(n, step + "/shift"))
                  .In(scaled)
                  .In(ChannelParam(n, step + ".shift", s.params.at("shift"), 4))
                  .Out(next));
          how += ", Mul(scale[M,1,1]), Add(shift[M,1,1])";
          break;
        }
        case EpilogueKind::kAdd:
          Add(NodeBuilder("Add", NodeName(n, step + "/add"))
                  .In(cur)
                  .In(n.inputs.at(static_cast<size_t>(s.input)))
                  .Out(next));
          how += ", Add(input " + std::to_string(s.input) + ")";
          break;
        case EpilogueKind::kActivation:
          EmitActivation(n, s.act, s.attrs, s.params, cur, next, NodeName(n, step));
          how += ", " + std::string(OpName(s.act));
          break;
        case EpilogueKind::kClamp:
          Add(NodeBuilder("Clip", NodeName(n, step + "/clamp"))
                  .In(cur)
                  .In(Scalar(n, step + ".min", AttrFloat(Op::Clip, s.attrs, "min", n.name)))
                  .In(Scalar(n, step + ".max", AttrFloat(Op::Clip, s.attrs, "max", n.name)))
                  .Out(next));
          how += ", Clip";
          break;
      }
      cur = next;
    }
    Record(n, "FusedConv = " + how);
  }

  // Activation `act` from x into y; `name` of the (first) ONNX node.
  void EmitActivation(const Node& n, Op act, const AttrMap& attrs, const ParamMap& params,
                      const std::string& x, const std::string& y, const std::string& name) {
    auto attr = [&](const char* a) { return AttrFloat(act, attrs, a, n.name); };
    switch (act) {
      case Op::Relu:
        Add(NodeBuilder("Relu", name).In(x).Out(y));
        return;
      case Op::Relu6:
        Add(NodeBuilder("Clip", name)
                .In(x)
                .In(Scalar(n, "zero", 0))
                .In(Scalar(n, "six", 6))
                .Out(y));
        if (n.op == Op::Relu6) Record(n, "Relu6 = Clip(x, 0, 6)");
        return;
      case Op::Clip:
        Add(NodeBuilder("Clip", name)
                .In(x)
                .In(Scalar(n, "min", attr("min")))
                .In(Scalar(n, "max", attr("max")))
                .Out(y));
        return;
      case Op::LeakyRelu:
        Add(NodeBuilder("LeakyRelu", name).In(x).Out(y).AttrF("alpha", attr("alpha")));
        return;
      case Op::PRelu:
        // The slope broadcasts from the right in both formats (graph format 2): exported as is.
        Add(NodeBuilder("PRelu", name).In(x).In(Param(n, "slope", params.at("slope"))).Out(y));
        return;
      case Op::Elu:
        Add(NodeBuilder("Elu", name).In(x).Out(y).AttrF("alpha", attr("alpha")));
        return;
      case Op::Sigmoid:
        Add(NodeBuilder("Sigmoid", name).In(x).Out(y));
        return;
      case Op::HardSigmoid:
        Add(NodeBuilder("HardSigmoid", name)
                .In(x)
                .Out(y)
                .AttrF("alpha", attr("alpha"))
                .AttrF("beta", attr("beta")));
        return;
      case Op::Tanh:
        Add(NodeBuilder("Tanh", name).In(x).Out(y));
        return;
      case Op::Silu: {
        std::string s = Value(n, "sigmoid");
        Add(NodeBuilder("Sigmoid", name).In(x).Out(s));
        Add(NodeBuilder("Mul", Fresh(&used_nodes_, name + "/mul")).In(x).In(s).Out(y));
        if (n.op == Op::Silu) Record(n, "Silu = Mul(x, Sigmoid(x))");
        return;
      }
      case Op::HardSwish:
        Add(NodeBuilder("HardSwish", name).In(x).Out(y));
        return;
      case Op::Gelu:
        EmitGelu(n, AttrString(act, attrs, "approximate", n.name) == "tanh", x, y, name);
        return;
      case Op::Conv:
      case Op::FusedConv:
      case Op::BatchNorm:
      case Op::LayerNorm:
      case Op::GroupNorm:
      case Op::InstanceNorm:
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Pad:
      case Op::MaxPool:
      case Op::AvgPool:
      case Op::GlobalAvgPool:
      case Op::Concat:
      case Op::Identity:
      case Op::Flatten:
      case Op::Reshape:
      case Op::Gemm:
      case Op::MatMul:
      case Op::QuantizeLinear:
      case Op::DequantizeLinear:
      case Op::QLinearConv:
      case Op::ReduceMean:
      case Op::Pow:
      case Op::Sqrt:
      case Op::Reciprocal:
      case Op::Exp:
      case Op::Log:
      case Op::Erf:
      case Op::Min:
      case Op::Max:
      case Op::ReduceSum:
      case Op::ReduceMax:
      case Op::Softmax:
      case Op::Transpose:
      case Op::QLinearAdd:
        break;
    }
    throw InputError("node '" + n.name + "'", std::string(OpName(act)) + " is not an activation");
  }

  // GELU as ONNX's own Gelu-20 function body would compute it, in opset-17 ops:
  //   none: y = 0.5 * x * (1 + erf(x / sqrt(2)))
  //   tanh: y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
  void EmitGelu(const Node& n, bool tanh_form, const std::string& x, const std::string& y,
                const std::string& name) {
    auto node = [&](const std::string& op, const std::string& step) {
      return NodeBuilder(op, Fresh(&used_nodes_, name + "/" + step));
    };
    std::string inner;
    if (tanh_form) {
      std::string x2 = Value(n, "x2"), x3 = Value(n, "x3"), cx3 = Value(n, "cx3"),
                  sum = Value(n, "sum"), arg = Value(n, "arg");
      Add(node("Mul", "x2").In(x).In(x).Out(x2));
      Add(node("Mul", "x3").In(x2).In(x).Out(x3));
      Add(node("Mul", "cx3").In(x3).In(Scalar(n, "c0.044715", 0.044715)).Out(cx3));
      Add(node("Add", "sum").In(x).In(cx3).Out(sum));
      Add(node("Mul", "arg")
              .In(sum)
              .In(Scalar(n, "sqrt_2_over_pi", 0.79788456080286535588))
              .Out(arg));
      inner = Value(n, "tanh");
      Add(node("Tanh", "tanh").In(arg).Out(inner));
      Record(n, "Gelu(tanh) = 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x*x*x)))");
    } else {
      std::string arg = Value(n, "arg");
      Add(node("Div", "arg").In(x).In(Scalar(n, "sqrt2", 1.41421356237309504880)).Out(arg));
      inner = Value(n, "erf");
      Add(node("Erf", "erf").In(arg).Out(inner));
      Record(n, "Gelu(none) = 0.5 * x * (1 + Erf(x / sqrt(2)))");
    }
    std::string one = Value(n, "one_plus"), half_x = Value(n, "half_x");
    Add(node("Add", "one_plus").In(inner).In(Scalar(n, "one", 1)).Out(one));
    Add(node("Mul", "half_x").In(x).In(Scalar(n, "half", 0.5)).Out(half_x));
    Add(node("Mul", "y").In(half_x).In(one).Out(y));
  }

  // GroupNormalization with per-channel scale (opset 21) in opset-17 ops: normalize each
  // (n, group) as one instance of InstanceNormalization over [N, G, C/G*H*W], then apply the
  // per-channel scale and bias.
  void EmitGroupNorm(const Node& n) {
    const Shape& s = shapes_.at(n.inputs[0]);
    int64_t groups = AttrInt(n, "num_groups");
    std::string grouped = Value(n, "grouped"), normed = Value(n, "normed"),
                back = Value(n, "ungrouped"), scaled = Value(n, "scaled");
    Add(NodeBuilder("Reshape", NodeName(n, "group"))
            .In(n.inputs[0])
            .In(Int64Initializer(n.name + "/grouped_shape", {s[0], groups, -1}))
            .Out(grouped));
    Add(NodeBuilder("InstanceNormalization", NodeName(n, "normalize"))
            .In(grouped)
            .In(Initializer(n.name + "/ones", {groups},
                            std::vector<float>(static_cast<size_t>(groups), 1.0f)))
            .In(Initializer(n.name + "/zeros", {groups},
                            std::vector<float>(static_cast<size_t>(groups), 0.0f)))
            .Out(normed)
            .AttrF("epsilon", AttrFloat(n, "epsilon")));
    Add(NodeBuilder("Reshape", NodeName(n, "ungroup"))
            .In(normed)
            .In(Int64Initializer(n.name + "/shape", s))
            .Out(back));
    Add(NodeBuilder("Mul", NodeName(n, "scale"))
            .In(back)
            .In(ChannelParam(n, "scale", n.params.at("scale"), 4))
            .Out(scaled));
    Add(NodeBuilder("Add", NodeName(n, "bias"))
            .In(scaled)
            .In(ChannelParam(n, "bias", n.params.at("bias"), 4))
            .Out(n.output));
    Record(n,
           "GroupNorm = Reshape[N,G,-1], InstanceNormalization(ones, zeros), Reshape[N,C,H,W], "
           "Mul(scale[C,1,1]), Add(bias[C,1,1])");
  }

  void EmitBinary(const Node& n) {
    BinaryOperands o = GetBinaryOperands(n);
    NodeBuilder b(std::string(OpName(n.op)), n.name);
    b.In(o.const_a ? Param(n, "A", *o.const_a) : n.inputs.at(static_cast<size_t>(o.input_a)));
    b.In(o.const_b ? Param(n, "B", *o.const_b) : n.inputs.at(static_cast<size_t>(o.input_b)));
    Add(b.Out(n.output));
  }

  // Gemm 1:1, then its epilogue steps as the ONNX ops they stand for (rank 2).
  void EmitGemm(const Node& n) {
    std::string cur = n.epilogue.empty() ? n.output : Value(n, "gemm");
    NodeBuilder b("Gemm", n.epilogue.empty() ? n.name : NodeName(n, "gemm"));
    b.In(n.inputs[0]).In(GridOrParam(n, "B", n.params.at("B")));
    if (auto it = n.params.find("C"); it != n.params.end()) b.In(GridOrParam(n, "C", it->second));
    b.Out(cur)
        .AttrF("alpha", AttrFloat(n, "alpha"))
        .AttrF("beta", AttrFloat(n, "beta"))
        .AttrI("transA", AttrInt(n, "transA"))
        .AttrI("transB", AttrInt(n, "transB"));
    Add(b);
    std::string how = "Gemm";
    for (size_t i = 0; i < n.epilogue.size(); ++i) {
      const EpilogueStep& s = n.epilogue[i];
      const std::string step = "step" + std::to_string(i);
      const std::string next = i + 1 == n.epilogue.size() ? n.output : Value(n, step);
      if (s.kind == EpilogueKind::kClamp) {
        Add(NodeBuilder("Clip", NodeName(n, step + "/clamp"))
                .In(cur)
                .In(Scalar(n, step + ".min", AttrFloat(Op::Clip, s.attrs, "min", n.name)))
                .In(Scalar(n, step + ".max", AttrFloat(Op::Clip, s.attrs, "max", n.name)))
                .Out(next));
        how += ", Clip";
      } else {
        EmitActivation(n, s.act, s.attrs, s.params, cur, next, NodeName(n, step));
        how += ", " + std::string(OpName(s.act));
      }
      cur = next;
    }
    if (!n.epilogue.empty()) Record(n, "Gemm with epilogue = " + how);
  }

  void EmitPad(const Node& n) {
    auto p = AttrInts(n, "pads");  // t, l, b, r
    // "wrap" is Pad-19's: such a graph is exported at opset 19 (RequiredOnnxOpset).
    std::string mode = AttrString(n, "mode");
    NodeBuilder b("Pad", n.name);
    b.In(n.inputs[0]).In(Int64Initializer(n.name + "/pads", {0, 0, p[0], p[1], 0, 0, p[2], p[3]}));
    if (mode == "constant") {
      // A Pad of integers writes its value in the data's integer type (onnx/export_quant.h).
      const std::optional<QuantType> t = quant_.IntegerPadType(n);
      b.In(t ? quant_.IntScalar(n.name + "/value", AttrFloat(n, "value"), *t)
             : Scalar(n, "value", AttrFloat(n, "value")));
    }
    Add(b.Out(n.output).AttrS("mode", mode));
  }

  const Graph& g_;
  const OnnxExportOptions& opts_;
  ShapeMap shapes_;
  std::set<std::string> used_values_, used_nodes_;
  onnx::GraphProto graph_;  // nodes and initializers as they are emitted
  std::vector<std::pair<std::string, std::string>> decompositions_;
  std::map<const Tensor*, std::string> initializer_of_;  // every param written, by address
  QuantExport quant_;                                    // after the members it points to
  bool constants_as_nodes_ = false;  // while writing a node spelled onnx.constant-nodes
};

}  // namespace

OnnxModel ExportOnnx(const Graph& g, const OnnxExportOptions& opts) {
  return Exporter(g, opts).Run();
}

std::string Base64Bytes(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

int RequiredOnnxOpset(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.op == Op::Pad && AttrString(n, "mode") == "wrap") return kOnnxOpsetNewer;
    if (n.op == Op::AvgPool) {
      PoolAttrs a = GetPoolAttrs(n);
      if (a.dilation_h != 1 || a.dilation_w != 1) return kOnnxOpsetNewer;
    }
  }
  return kOnnxOpset;
}

bool PoolShapesPredateLibonnx(const Graph& g) {
  ShapeMap shapes = VerifyGraph(g);
  // libonnx 1.12: ceil((in + pads - k) / s) + 1, no window dropped.
  auto old_size = [](int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe) {
    return (in + pb + pe - k + s - 1) / s + 1;
  };
  for (const Node& n : g.nodes) {
    if (n.op != Op::MaxPool && n.op != Op::AvgPool) continue;
    PoolAttrs a = GetPoolAttrs(n);
    if (!a.ceil_mode) continue;
    const Shape& x = shapes.at(n.inputs[0]);
    const Shape& y = shapes.at(n.output);
    if (old_size(x[2], a.kernel_h, a.stride_h, a.pad_top, a.pad_bottom) != y[2] ||
        old_size(x[3], a.kernel_w, a.stride_w, a.pad_left, a.pad_right) != y[3]) {
      return true;
    }
  }
  return false;
}

void WriteBackendTestData(const std::string& dir, const Graph& g, const TensorMap& inputs,
                          const TensorMap& outputs, int set) {
  const std::string sub = "test_data_set_" + std::to_string(set);
  std::vector<std::pair<std::string, std::string>> files;  // name in `sub`, bytes
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto it = inputs.find(g.inputs[i].name);
    if (it == inputs.end())
      throw InputError("inputs", "missing graph input '" + g.inputs[i].name + "'");
    files.emplace_back("input_" + std::to_string(i) + ".pb",
                       EncodeTensorProto(it->first, it->second));
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    auto it = outputs.find(g.outputs[i]);
    if (it == outputs.end())
      throw InputError("outputs", "missing graph output '" + g.outputs[i] + "'");
    files.emplace_back("output_" + std::to_string(i) + ".pb",
                       EncodeTensorProto(it->first, it->second));
  }
  // DIR is the caller's; inside it nothing planted is followed (ir/folder_write.h). A folder
  // this call created is removed again when a write fails (a full disk leaves nothing behind).
  const bool existed = IsFolderIn(dir, sub);
  MakeFolderIn(dir, sub);
  try {
    for (const auto& [name, bytes] : files) WriteFileInFolder(dir, sub + "/" + name, bytes);
  } catch (const InputError&) {
    if (!existed) RemoveIn(dir, sub);
    throw;
  }
}

TensorMap ReadBackendTestData(const std::string& set_dir, const std::vector<std::string>& names,
                              const std::string& prefix, const std::vector<Shape>* shapes) {
  namespace fs = std::filesystem;
  auto file = [&](size_t i) {
    return (fs::path(set_dir) / (prefix + "_" + std::to_string(i) + ".pb")).string();
  };
  TensorMap out;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string path = file(i);
    NamedTensor t = ReadTensorProtoFile(path);
    if (!t.name.empty() && t.name != names[i]) {
      throw InputError(path, "TensorProto is named '" + t.name + "', expected '" + names[i] + "'");
    }
    if (shapes && i < shapes->size() && t.tensor.shape != (*shapes)[i]) {
      throw InputError(path, "shape " + ShapeToString(t.tensor.shape) + " of '" + names[i] +
                                 "' does not match the graph's " + ShapeToString((*shapes)[i]));
    }
    out[names[i]] = std::move(t.tensor);
  }
  std::error_code ec;
  if (fs::symlink_status(file(names.size()), ec).type() != fs::file_type::not_found) {
    throw InputError(file(names.size()),
                     "the graph has " + std::to_string(names.size()) + " " + prefix +
                         "(s), this file would be one more (a stale or mismatched data set?)");
  }
  return out;
}

}  // namespace fusefuzz
