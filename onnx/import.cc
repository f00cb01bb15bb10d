// ONNX import: libprotobuf parses the ModelProto into libonnx's generated classes (memory in
// proportion to the file, which is at most 2 GiB), then each node is mapped to a fusefuzz op.
// Shapes are inferred node by node (ONNX requires topological order), which is what auto_pad
// needs. Every declared size is checked against Limits before a tensor is allocated.
#include "onnx/import.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "ir/broadcast.h"
#include "ir/error.h"
#include "ir/verifier.h"
#include "onnx/export.h"
#include "onnx/import_internal.h"
#include "onnx/model_guard.h"
#include "onnx/node_record.h"
#include "onnx/proto_io.h"

namespace fusefuzz {

namespace {

// Bytes per element of a raw_data tensor; 0 for types without a fixed size (string, unknown).
int64_t RawElementBytes(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

bool RawDataSizeHolds(const onnx::TensorProto& t) {
  if (!t.has_raw_data()) return true;
  const int64_t bytes = RawElementBytes(t.data_type());
  if (bytes == 0) return false;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / bytes / d)) return false;
    n *= d;
  }
  return static_cast<int64_t>(t.raw_data().size()) == n * bytes;
}

// Every initializer and tensor attribute, subgraphs included.
bool RawDataSizesHold(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer()) {
    if (!RawDataSizeHolds(t)) return false;
  }
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_t() && !RawDataSizeHolds(a.t())) return false;
      for (const auto& t : a.tensors()) {
        if (!RawDataSizeHolds(t)) return false;
      }
      if (a.has_g() && !RawDataSizesHold(a.g())) return false;
      for (const auto& sg : a.graphs()) {
        if (!RawDataSizesHold(sg)) return false;
      }
    }
  }
  return true;
}

// Every strides, dilations and kernel_shape attribute (any op, subgraphs included) holds only
// positive numbers.
bool StridesAndDilationsPositive(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape") {
        for (int64_t v : a.ints()) {
          if (v <= 0) return false;
        }
      }
      if (a.has_g() && !StridesAndDilationsPositive(a.g())) return false;
      for (const auto& sg : a.graphs()) {
        if (!StridesAndDilationsPositive(sg)) return false;
      }
    }
  }
  return true;
}

// libonnx 1.12's Conv, ConvInteger, QLinearConv and ConvTranspose inference takes a missing
// kernel_shape from the weight's dims and then indexes the input-rank-sized dilations and
// strides with it, unchecked (a rank-2 input to a 2-D conv read past an empty vector: SIGSEGV,
// found by onnx_cut_fuzzer). So, on the copy that is only inferred, each such node without
// kernel_shape gets its weight's spatial dims as one, which libonnx does check against the input
// rank. False when a weight's dims are not known before inference (not an initializer or a
// Constant of this or an enclosing graph): such a model gets no inferred shapes at all.
bool PinConvKernelShapes(onnx::GraphProto* g, std::map<std::string, std::vector<int64_t>> dims) {
  for (const auto& t : g->initializer()) dims[t.name()].assign(t.dims().begin(), t.dims().end());
  for (const auto& n : g->node()) {
    if (n.op_type() != "Constant") continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t() && n.output_size() == 1) {
        dims[n.output(0)].assign(a.t().dims().begin(), a.t().dims().end());
      }
    }
  }
  for (onnx::NodeProto& n : *g->mutable_node()) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g() && !PinConvKernelShapes(a.mutable_g(), dims)) return false;
      for (onnx::GraphProto& sg : *a.mutable_graphs()) {
        if (!PinConvKernelShapes(&sg, dims)) return false;
      }
    }
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (op != "Conv" && op != "ConvInteger" && op != "ConvTranspose" && op != "QLinearConv") {
      continue;
    }
    const int w = op == "QLinearConv" ? 3 : 1;
    if (n.input_size() <= w || n.input(w).empty()) continue;  // libonnx infers nothing then
    bool has_kernel_shape = false;
    for (const auto& a : n.attribute()) has_kernel_shape |= a.name() == "kernel_shape";
    if (has_kernel_shape) continue;
    auto it = dims.find(n.input(w));
    if (it == dims.end() || it->second.size() < 2) return false;
    onnx::AttributeProto* k = n.add_attribute();
    k->set_name("kernel_shape");
    k->set_type(onnx::AttributeProto::INTS);
    for (size_t i = 2; i < it->second.size(); ++i) k->add_ints(it->second[i]);
  }
  return true;
}

}  // namespace
namespace {

class Importer {
 public:
  Importer(std::string source, const Limits& limits, bool cut, bool refuse)
      : src_(std::move(source)), limits_(limits), cut_mode_(cut), refuse_(refuse) {}

  Graph Run(std::string_view bytes) {
    DecodeModel(bytes);
    {
      std::set<std::string> ins, outs(outputs_.begin(), outputs_.end());
      for (const OValue& v : inputs_) ins.insert(v.name);
      RemoveIdentityCasts(&nodes_, ins, outs, &types_);
    }
    if (cut_mode_) InferShapesForCut(bytes);
    if (refuse_) PlaceRecordedNodes();
    Graph g;
    for (const OValue& v : inputs_) {
      if (consts_.count(v.name)) continue;  // an initializer listed as input (IR < 4)
      if (!v.static_shape || v.dims.empty() || static_cast<int64_t>(v.dims.size()) > 4) {
        if (!cut_mode_)
          Fail("graph input '" + v.name + "' needs a static float shape of rank 1..4");
        cut_.model_inputs.push_back({v.name, v.dims});
        continue;  // its consumers are cut off
      }
      if (cut_mode_) cut_.model_inputs.push_back({v.name, v.dims});
      g.inputs.push_back({v.name, v.dims});
      shapes_[v.name] = v.dims;
    }
    std::set<std::string> node_names;
    std::vector<size_t> onnx_index;  // of each node of g in nodes_
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const ONode& on = nodes_[i];
      try {
        if (on.op_type == "Constant") {
          AddConstant(on);
          continue;
        }
        // torch.onnx.export passes shared weights through Identity: a constant, not a node.
        if (on.op_type == "Identity" && on.inputs.size() == 1 && on.outputs.size() == 1 &&
            consts_.count(on.inputs[0])) {
          consts_[on.outputs[0]] = consts_.at(on.inputs[0]);
          if (grids_.count(on.inputs[0])) grids_[on.outputs[0]] = grids_.at(on.inputs[0]);
          continue;
        }
        // A QDQ model's weights: DequantizeLinear of an integer initializer is a constant that
        // lies on that grid (a Conv or Gemm reading it declares the grid, Node::quant).
        if (on.op_type == "QuantizeLinear" && on.record < 0 && Const(on, 0)) {
          FoldQuantize(on);
          continue;
        }
        if (on.op_type == "DequantizeLinear" && on.record < 0 && Const(on, 0)) {
          FoldDequantize(on);
          continue;
        }
        Node n = on.record >= 0 ? RecordedNode(on) : Convert(on);
        RefuseIntegerArithmetic(on, n);
        NoteIntegerType(n);
        // ONNX allows negative scales on QuantizeLinear/DequantizeLinear, and fusefuzz exports
        // them (graph option allow_negative_scale, which ONNX has no field for): read back, such
        // a model gets the option again, so fusefuzz can read what it exports.
        if (n.op == Op::QuantizeLinear || n.op == Op::DequantizeLinear) {
          for (const auto& [role, q] : n.quant) {
            for (double sc : q.scale) g.options.allow_negative_scale |= sc < 0;
          }
        }
        // Defaults are left out, as in fusefuzz's own files: export -> import gives the same JSON.
        DropDefaultAttrs(n.op, n.attrs);
        std::string base = on.name.empty() ? "node" + std::to_string(i) : on.name;
        n.name = base;
        for (int k = 1; node_names.count(n.name); ++k) n.name = base + "_" + std::to_string(k);
        std::vector<Shape> in;
        for (const auto& v : n.inputs) in.push_back(ShapeOf(v, on));
        try {
          shapes_[n.output] = InferNodeShape(n, in);
        } catch (const InputError& e) {
          Fail(NodeWhere(on) + ": " + e.what());
        }
        node_names.insert(n.name);
        g.nodes.push_back(std::move(n));
        onnx_index.push_back(i);
      } catch (const InputError& e) {
        if (!cut_mode_) throw;
        dropped_.emplace_back(i, e.problem());
      }
    }
    if (cut_mode_) return KeepLargestPart(std::move(g), onnx_index);
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

  CutImport& cut() { return cut_; }
  // Records the model holds (counted before they are read, so a malformed one counts too).
  size_t records() const { return record_keys_; }

 private:
  [[noreturn]] void Fail(const std::string& what) const { throw InputError(src_, what); }
  static std::string NodeWhere(const ONode& n) {
    return "node '" + n.name + "' (op type " + n.op_type + ")";
  }
  [[noreturn]] void FailNode(const ONode& n, const std::string& what) const {
    Fail(NodeWhere(n) + ": " + what);
  }

  OTensor DecodeTensor(const onnx::TensorProto& p, const std::string& what) const {
    OTensor t;
    if (p.dims_size() > 4) Fail(what + ": rank above 4");
    if (p.data_location() != onnx::TensorProto::DEFAULT) {
      Fail(what + ": external data is not supported");
    }
    int64_t count = 1;
    for (int64_t d : p.dims()) {
      if (d < 0 || d > limits_.max_dim) Fail(what + ": dim " + std::to_string(d) + " out of range");
      t.dims.push_back(d);
      // Checked before multiplying: four dims of up to max_dim would overflow int64.
      if (d > 0 && count > limits_.max_elements_per_tensor / d) {
        Fail(what + ": more elements than the limit");
      }
      count *= d;
    }
    if (count > limits_.max_elements_per_tensor) Fail(what + ": more elements than the limit");
    auto n = static_cast<size_t>(count);
    t.type = p.data_type();
    const std::string& raw = p.raw_data();
    if (t.type == onnx::TensorProto::FLOAT) {
      if (p.has_raw_data()) {
        if (raw.size() != 4 * n) Fail(what + ": raw_data size does not match the dims");
        t.floats.resize(n);
        if (n) std::memcpy(t.floats.data(), raw.data(), 4 * n);  // little-endian host
      } else {
        if (static_cast<size_t>(p.float_data_size()) != n) {
          Fail(what + ": float_data size does not match the dims");
        }
        t.floats.assign(p.float_data().begin(), p.float_data().end());
      }
    } else if (t.type == onnx::TensorProto::INT64) {
      if (p.has_raw_data()) {
        if (raw.size() != 8 * n) Fail(what + ": raw_data size does not match the dims");
        t.ints.resize(n);
        if (n) std::memcpy(t.ints.data(), raw.data(), 8 * n);
      } else {
        if (static_cast<size_t>(p.int64_data_size()) != n) {
          Fail(what + ": int64_data size does not match the dims");
        }
        t.ints.assign(p.int64_data().begin(), p.int64_data().end());
      }
    } else if (QuantTypeOfOnnx(t.type)) {
      try {
        DecodeIntegerTensor(p, n, &t);
      } catch (const InputError& e) {
        Fail(what + ": " + e.problem());
      }
    } else {
      Fail(what + ": data type " + OnnxTypeName(t.type) +
           " (fusefuzz reads float, int64, and the uint8, int8 and int32 of quantized models)");
    }
    return t;
  }

  OValue DecodeValueInfo(const onnx::ValueInfoProto& p) const {
    OValue v;
    v.name = p.name();
    if (!p.type().has_tensor_type()) return v;
    const onnx::TypeProto::Tensor& tensor = p.type().tensor_type();
    if (tensor.has_elem_type() && tensor.elem_type() != onnx::TensorProto::FLOAT) {
      const std::optional<QuantType> q = QuantTypeOfOnnx(tensor.elem_type());
      if (!q || *q == QuantType::kInt32) {
        Fail("value '" + v.name + "' is " + OnnxTypeName(tensor.elem_type()) +
             ": fusefuzz's graph inputs are float32, or the uint8/int8 of a quantized model");
      }
      v.type = *q;
    }
    if (!tensor.has_shape()) return v;
    for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
      if (!d.has_dim_value()) v.static_shape = false;
      if (v.dims.size() < 4) v.dims.push_back(d.dim_value());
    }
    if (tensor.shape().dim_size() > 4) v.static_shape = false;
    return v;
  }

  ONode DecodeNode(const onnx::NodeProto& p) const {
    ONode n;
    n.name = p.name();
    n.op_type = p.op_type();
    n.domain = p.domain();
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    for (const onnx::AttributeProto& ap : p.attribute()) {
      if (ap.ints_size() > 64) Fail("attribute '" + ap.name() + "' has over 64 ints");
      OAttr a;
      a.type = ap.type();
      a.f = ap.f();
      a.i = ap.i();
      a.s = ap.s().substr(0, 256);
      a.ints.assign(ap.ints().begin(), ap.ints().end());
      a.t = ap.t();
      n.attrs[ap.name()] = std::move(a);
    }
    return n;
  }

  void DecodeModel(std::string_view bytes) {
    onnx::ModelProto m;
    ParseProto(bytes, &m, src_, "ONNX ModelProto");
    CheckModelProto(m, src_);
    for (const onnx::OperatorSetIdProto& o : m.opset_import()) {
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    }
    for (const onnx::StringStringEntryProto& e : m.metadata_props()) metadata_[e.key()] = e.value();
    if (!m.has_graph()) Fail("no graph in the model (not an ONNX ModelProto?)");
    const onnx::GraphProto& g = m.graph();
    if (g.node_size() > limits_.max_nodes) {
      Fail("more than " + std::to_string(limits_.max_nodes) + " nodes");
    }
    for (const onnx::NodeProto& n : g.node()) nodes_.push_back(DecodeNode(n));
    for (const onnx::TensorProto& t : g.initializer()) {
      try {
        consts_[t.name()] = DecodeTensor(t, "initializer '" + t.name() + "'");
      } catch (const InputError& e) {
        // Refused when a node reads it, naming the node (and in --cut, only that node is cut).
        bad_consts_[t.name()] = e.problem();
      }
    }
    for (const onnx::ValueInfoProto& v : g.input()) {
      inputs_.push_back(DecodeValueInfo(v));
      if (inputs_.back().type) types_[v.name()] = *inputs_.back().type;
    }
    for (const onnx::ValueInfoProto& v : g.output()) outputs_.push_back(v.name());
  }

  void AddConstant(const ONode& n) {
    if (n.outputs.size() != 1) FailNode(n, "expected one output");
    auto it = n.attrs.find("value");
    if (it != n.attrs.end()) {
      consts_[n.outputs[0]] = DecodeTensor(it->second.t, NodeWhere(n) + " value");
    } else if ((it = n.attrs.find("value_float")) != n.attrs.end()) {
      consts_[n.outputs[0]] = OTensor{{}, onnx::TensorProto::FLOAT, {it->second.f}, {}};
    } else if ((it = n.attrs.find("value_ints")) != n.attrs.end()) {
      consts_[n.outputs[0]] = OTensor{{static_cast<int64_t>(it->second.ints.size())},
                                      onnx::TensorProto::INT64,
                                      {},
                                      it->second.ints};
    } else {
      FailNode(n, "only value, value_float and value_ints constants are supported");
    }
  }

  const Shape& ShapeOf(const std::string& v, const ONode& n) const {
    auto it = shapes_.find(v);
    if (it != shapes_.end()) return it->second;
    if (cut_mode_) {
      // A value of a node that was cut off: it becomes a graph input if its shape is known.
      auto jt = inferred_.find(v);
      if (jt != inferred_.end()) return jt->second;
      FailNode(n,
               "input '" + v + "' has no static float32 shape of rank 1..4 (ONNX shape inference)");
    }
    FailNode(n, "input '" + v + "' is not a graph input or node output");
  }

  // --cut: the shapes of every value, from libonnx's shape inference (with data propagation, so
  // Reshape targets computed by Shape/Gather chains are known too). A model it cannot infer
  // simply has fewer cut points. libonnx 1.12's data propagation copies raw_data without
  // checking its length (ParseData: a 3-byte int64 raw_data is a memcpy into an empty vector's
  // null data, found by fuzz/onnx_cut_fuzzer.cc), so it runs only when every tensor's raw_data
  // holds exactly its dims' elements.
  void InferShapesForCut(std::string_view bytes) {
    onnx::ModelProto m;
    ParseProto(bytes, &m, src_, "ONNX ModelProto");
    // libonnx 1.12's conv/pool inference divides by strides and dilations unchecked (SIGFPE on
    // a 0, found by onnx_cut_fuzzer): such a model gets no inferred shapes at all.
    if (!StridesAndDilationsPositive(m.graph())) return;
    if (!PinConvKernelShapes(m.mutable_graph(), {})) return;
    try {
      onnx::shape_inference::InferShapes(
          m, onnx::OpSchemaRegistry::Instance(),
          onnx::ShapeInferenceOptions(false, 0, RawDataSizesHold(m.graph())));
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): partial shapes are kept
    }
    auto add = [&](const onnx::ValueInfoProto& p) {
      OValue v = DecodeValueInfoLenient(p);
      if (v.static_shape && !v.dims.empty() && v.dims.size() <= 4) inferred_[v.name] = v.dims;
    };
    for (const auto& p : m.graph().value_info()) add(p);
    for (const auto& p : m.graph().output()) add(p);
  }

  // Like DecodeValueInfo, but a value that is not float32 is simply not static.
  static OValue DecodeValueInfoLenient(const onnx::ValueInfoProto& p) {
    OValue v;
    v.name = p.name();
    v.static_shape = false;
    if (!p.type().has_tensor_type()) return v;
    const onnx::TypeProto::Tensor& tensor = p.type().tensor_type();
    if (tensor.elem_type() != onnx::TensorProto::FLOAT || !tensor.has_shape()) return v;
    v.static_shape = tensor.shape().dim_size() <= 4;
    for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 1) v.static_shape = false;
      v.dims.push_back(d.dim_value());
    }
    return v;
  }

  // --cut: keeps the largest weakly connected part of the importable nodes (ties: the earliest);
  // the values it reads from elsewhere become graph inputs, the values others read (or the model
  // outputs) become graph outputs.
  Graph KeepLargestPart(Graph g, const std::vector<size_t>& onnx_index) {
    const size_t n = g.nodes.size();
    cut_.model_nodes = 0;
    for (const ONode& on : nodes_) {
      if (on.op_type != "Constant") ++cut_.model_nodes;
    }
    if (n == 0) {
      Fail("no node of the model is in fusefuzz's vocabulary" +
           (dropped_.empty() ? std::string() : " (first: " + dropped_.front().second + ")"));
    }
    std::map<std::string, size_t> producer;
    for (size_t j = 0; j < n; ++j) producer[g.nodes[j].output] = j;
    std::vector<size_t> parent(n);
    for (size_t j = 0; j < n; ++j) parent[j] = j;
    auto find = [&](size_t j) {
      while (parent[j] != j) j = parent[j] = parent[parent[j]];
      return j;
    };
    for (size_t j = 0; j < n; ++j) {
      for (const std::string& v : g.nodes[j].inputs) {
        auto it = producer.find(v);
        if (it != producer.end()) parent[find(j)] = find(it->second);
      }
    }
    std::vector<size_t> size(n, 0);
    for (size_t j = 0; j < n; ++j) ++size[find(j)];
    size_t best = find(0);
    for (size_t j = 0; j < n; ++j) {
      if (size[find(j)] > size[best]) best = find(j);
    }
    std::set<size_t> kept_onnx;
    Graph out;
    out.options = g.options;
    std::set<std::string> produced_here;
    for (size_t j = 0; j < n; ++j) {
      if (find(j) == best) {
        kept_onnx.insert(onnx_index[j]);
        produced_here.insert(g.nodes[j].output);
      } else {
        dropped_.emplace_back(onnx_index[j], NodeWhere(nodes_[onnx_index[j]]) +
                                                 ": importable, but not connected to the "
                                                 "largest importable part");
      }
    }
    // Inputs: the model's own inputs (model order), then cut values (order of first use).
    std::set<std::string> read;
    std::vector<std::string> cut_values;
    for (size_t j = 0; j < n; ++j) {
      if (find(j) != best) continue;
      for (const std::string& v : g.nodes[j].inputs) {
        if (produced_here.count(v) || !read.insert(v).second) continue;
        bool model_input = false;
        for (const ValueInfo& in : g.inputs) model_input = model_input || in.name == v;
        if (!model_input) cut_values.push_back(v);
      }
    }
    for (const ValueInfo& in : g.inputs) {
      if (read.count(in.name)) out.inputs.push_back(in);
    }
    for (const std::string& v : cut_values) {
      out.inputs.push_back({v, shapes_.count(v) ? shapes_.at(v) : inferred_.at(v)});
      cut_.cut_inputs.push_back(v);
    }
    // Outputs: values of the part that the model outputs or that another node reads.
    std::set<std::string> read_elsewhere;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (kept_onnx.count(i)) continue;
      for (const std::string& v : nodes_[i].inputs) read_elsewhere.insert(v);
    }
    const std::set<std::string> model_outputs(outputs_.begin(), outputs_.end());
    for (size_t j = 0; j < n; ++j) {
      if (find(j) != best) continue;
      const std::string& o = g.nodes[j].output;
      if (model_outputs.count(o)) {
        out.outputs.push_back(o);
      } else if (read_elsewhere.count(o)) {
        out.outputs.push_back(o);
        cut_.cut_outputs.push_back(o);
      }
    }
    for (size_t j = 0; j < n; ++j) {
      if (find(j) == best) out.nodes.push_back(std::move(g.nodes[j]));
    }
    std::sort(dropped_.begin(), dropped_.end());
    for (auto& d : dropped_) cut_.dropped.push_back(std::move(d.second));
    if (out.outputs.empty()) out.outputs.push_back(out.nodes.back().output);
    try {
      VerifyGraph(out, limits_);
    } catch (const InputError& e) {
      Fail(e.what());
    }
    return out;
  }

  const OTensor* Const(const ONode& n, size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
    if (auto bad = bad_consts_.find(n.inputs[i]); bad != bad_consts_.end()) {
      FailNode(n, bad->second);
    }
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
    if (t.type != onnx::TensorProto::FLOAT) FailNode(n, std::string(what) + " must be float");
    return Tensor(t.dims.empty() ? Shape{1} : t.dims, t.floats);
  }
  double Scalar(const ONode& n, size_t i, const char* what, double absent) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return absent;
    const OTensor& t = NeedConst(n, i, what);
    if (t.type != onnx::TensorProto::FLOAT || t.floats.size() != 1)
      FailNode(n, std::string(what) + ": one float");
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
    // Checked here, before the SAME arithmetic below divides by a stride (the verifier checks
    // the node again, with its own messages).
    if (x.size() != 4 || *std::min_element(x.begin(), x.end()) < 1 ||
        *std::max_element(x.begin(), x.end()) > limits_.max_dim) {
      FailNode(n, "input must have rank 4 (2-D only) and dims in [1, " +
                      std::to_string(limits_.max_dim) + "], got " + ShapeToString(x));
    }
    auto positive_pair = [&](const std::vector<int64_t>& v, const char* what) {
      if (v.size() != 2 || v[0] < 1 || v[1] < 1 || v[0] > limits_.max_dim ||
          v[1] > limits_.max_dim) {
        FailNode(n, std::string(what) + " must be 2 numbers in [1, " +
                        std::to_string(limits_.max_dim) + "] (2-D only)");
      }
    };
    positive_pair(k, "kernel_shape");
    positive_pair(s, "strides");
    positive_pair(d, "dilations");
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

  // Each recorded node takes the place of the first ONNX node of its decomposition; the others
  // are removed. ImportOnnx re-exports the result to prove the records true.
  void PlaceRecordedNodes() {
    const std::string prefix = kOnnxNodeRecordPrefix;
    for (auto it = metadata_.lower_bound(prefix);
         it != metadata_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      ++record_keys_;
    }
    records_ = ReadNodeRecords(metadata_, src_, limits_);
    if (records_.empty()) return;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!index.emplace(nodes_[i].name, i).second) {
        Fail("node name '" + nodes_[i].name + "' is used twice: its decomposition is ambiguous");
      }
    }
    std::vector<bool> removed(nodes_.size(), false);
    for (size_t r = 0; r < records_.size(); ++r) {
      size_t first = nodes_.size();
      for (const std::string& name : records_[r].onnx_nodes) {
        auto it = index.find(name);
        if (it == index.end() || removed[it->second] || nodes_[it->second].record >= 0) {
          Fail("metadata '" + records_[r].key + "': ONNX node '" + name +
               "' is missing or claimed twice");
        }
        first = std::min(first, it->second);
        removed[it->second] = true;
      }
      ONode& placeholder = nodes_[first];
      const nlohmann::json& node = records_[r].node;
      auto text = [&](const char* key) {
        auto it = node.find(key);
        return it != node.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      placeholder.name = text("name");
      placeholder.op_type = "recorded " + text("op");
      placeholder.record = static_cast<int>(r);
      removed[first] = false;
    }
    std::vector<ONode> kept;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!removed[i]) kept.push_back(std::move(nodes_[i]));
    }
    nodes_ = std::move(kept);
  }

  Node RecordedNode(const ONode& on) {
    auto floats_of = [&](const std::string& name) -> const std::vector<float>* {
      auto it = consts_.find(name);
      // QLinearConv's W and B are integer initializers holding the param's values.
      if (it == consts_.end()) return nullptr;
      const int t = it->second.type;
      if (t != onnx::TensorProto::FLOAT && !QuantTypeOfOnnx(t)) return nullptr;
      return &it->second.floats;
    };
    auto shape_of = [&](const std::string& v) { return ShapeOf(v, on); };
    return NodeFromRecord(records_.at(static_cast<size_t>(on.record)), floats_of, shape_of, src_,
                          limits_);
  }

  // The quantization parameters of node `on` from its constant inputs scale (i) and zero point
  // (i + 1); `x` the tensor they apply to (for the axis and the integer type).
  // `dequantized`: x holds the integers (its type must match the zero point's).
  QuantParams QuantOf(const ONode& on, size_t i, const std::string& x, const char* what,
                      bool axis_attr, bool dequantized) {
    const OTensor* scale = Const(on, i);
    const bool has_zero = i + 1 < on.inputs.size() && !on.inputs[i + 1].empty();
    const OTensor* zero = has_zero ? Const(on, i + 1) : nullptr;
    if (!scale)
      FailQ(on, std::string(what) + " scale (input " + std::to_string(i) +
                    ") is not a constant; fusefuzz models constant scales only");
    if (has_zero && !zero) {
      FailQ(on, std::string(what) + " zero point (input " + std::to_string(i + 1) +
                    ") is not a constant; fusefuzz models constant zero points only");
    }
    std::optional<QuantType> type;
    if (auto it = types_.find(x); dequantized && it != types_.end()) type = it->second;
    if (const OTensor* c = consts_.count(x) ? &consts_.at(x) : nullptr; dequantized && c) {
      type = QuantTypeOfOnnx(c->type);
    }
    const int64_t rank = consts_.count(x) ? static_cast<int64_t>(consts_.at(x).dims.size())
                                          : static_cast<int64_t>(ShapeOf(x, on).size());
    int64_t axis = axis_attr ? AttrI(on, "axis", 1) : 0;
    if (axis < 0) axis += rank;
    try {
      return QuantFromOnnx(*scale, zero, type, axis, what);
    } catch (const InputError& e) {
      FailQ(on, e.problem());
    }
  }
  [[noreturn]] void FailQ(const ONode& on, const std::string& what) const {
    FailNode(on, "the model is quantized, and " + what);
  }
  // Attributes of QuantizeLinear/DequantizeLinear newer than fusefuzz's model of them.
  void RefuseNewQuantAttrs(const ONode& on, std::optional<QuantType> type) const {
    if (AttrI(on, "block_size", 0) != 0) {
      FailQ(on, "it uses blocked quantization (block_size " +
                    std::to_string(AttrI(on, "block_size", 0)) +
                    "), which fusefuzz does not model");
    }
    if (AttrI(on, "saturate", 1) != 1) {
      FailQ(on, "it sets saturate=0 (float8 without saturation), which fusefuzz does not model");
    }
    if (on.attrs.count("output_dtype")) {
      // Compared whole: an int64 attribute cut to int would take 2^32 + 2 for uint8 (2).
      const int64_t t = AttrI(on, "output_dtype", 0);
      const bool is_int = t >= 0 && t <= std::numeric_limits<int>::max();
      if (t != 0 && (!is_int || QuantTypeOfOnnx(static_cast<int>(t)) != type)) {
        FailQ(on, "its output_dtype " +
                      (is_int ? OnnxTypeName(static_cast<int>(t)) : std::to_string(t)) +
                      " is not its zero point's type " +
                      (type ? std::string(QuantTypeName(*type)) : std::string("uint8")));
      }
    }
  }

  void FoldDequantize(const ONode& on) {
    if (on.outputs.size() != 1) FailNode(on, "expected one output");
    const OTensor& x = *Const(on, 0);
    if (!QuantTypeOfOnnx(x.type)) {
      FailQ(on, "it dequantizes a constant of type " + OnnxTypeName(x.type) +
                    " (fusefuzz models uint8, int8 and int32)");
    }
    QuantParams q = QuantOf(on, 1, on.inputs[0], "x", true, true);
    RefuseNewQuantAttrs(on, q.type);
    try {
      ValidateFor(q, x.dims.empty() ? Shape{1} : x.dims, true, "x");
    } catch (const InputError& e) {
      FailQ(on, std::string(e.what()));
    }
    consts_[on.outputs[0]] =
        OTensor{x.dims, onnx::TensorProto::FLOAT, DequantizeConstant(x, q), {}};
    grids_[on.outputs[0]] = q;
  }

  // torch.onnx.export of a fake-quantized (QAT-prepared) model keeps the float weights behind
  // QuantizeLinear -> DequantizeLinear: a QuantizeLinear of a float constant is the integer
  // constant ONNX's rule gives (float32 quotient, ties to even, saturated), and the
  // DequantizeLinear after it then folds into a weight on that grid (FoldDequantize).
  void FoldQuantize(const ONode& on) {
    if (on.outputs.size() != 1) FailNode(on, "expected one output");
    const OTensor& x = *Const(on, 0);
    if (x.type != onnx::TensorProto::FLOAT) {
      FailQ(on, "it quantizes a constant of type " + OnnxTypeName(x.type) + ", not float");
    }
    QuantParams q = QuantOf(on, 1, on.inputs[0], "y", true, false);
    RefuseNewQuantAttrs(on, q.type);
    const Shape shape = x.dims.empty() ? Shape{1} : x.dims;
    try {
      ValidateFor(q, shape, true, "y");
    } catch (const InputError& e) {
      FailQ(on, std::string(e.what()));
    }
    OTensor out{x.dims,
                q.type == QuantType::kUint8  ? onnx::TensorProto::UINT8
                : q.type == QuantType::kInt8 ? onnx::TensorProto::INT8
                                             : onnx::TensorProto::INT32,
                std::vector<float>(x.floats.size()), std::vector<int64_t>(x.floats.size())};
    ForEachQuantElement(q, shape, [&](size_t i, double sc, int64_t z) {
      out.floats[i] = QuantizeOnnx(x.floats[i], static_cast<float>(sc), z, q.type);
      out.ints[i] = static_cast<int64_t>(out.floats[i]);
    });
    consts_[on.outputs[0]] = std::move(out);
  }

  // Integer types flow from QuantizeLinear and the QLinear ops through the type-generic ops.
  void NoteIntegerType(const Node& n) {
    if (ProducesQuantized(n.op)) {
      types_[n.output] = n.quant.at("y").type;
    } else if ((n.op == Op::MaxPool || n.op == Op::Identity || n.op == Op::Reshape ||
                n.op == Op::Flatten || n.op == Op::Concat) &&
               !n.inputs.empty() && types_.count(n.inputs[0])) {
      types_[n.output] = types_.at(n.inputs[0]);
    }
  }
  // ONNX computes on integer tensors in integer arithmetic (a uint8 Add wraps around); fusefuzz
  // holds them as floats, so only the ops that are exact on them may read one: the quantized
  // ops and the type-generic ones.
  void RefuseIntegerArithmetic(const ONode& on, const Node& n) const {
    switch (n.op) {
      case Op::DequantizeLinear:
      case Op::QLinearConv:
      case Op::QLinearAdd:
      case Op::MaxPool:
      case Op::Identity:
      case Op::Reshape:
      case Op::Flatten:
      case Op::Concat:
        return;
      case Op::Conv:
      case Op::FusedConv:
      case Op::BatchNorm:
      case Op::LayerNorm:
      case Op::GroupNorm:
      case Op::InstanceNorm:
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
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Pad:
      case Op::AvgPool:
      case Op::GlobalAvgPool:
      case Op::Gemm:
      case Op::MatMul:
      case Op::QuantizeLinear:
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
        break;
    }
    if (on.record >= 0) return;  // proven by re-exporting it
    for (const std::string& v : n.inputs) {
      if (on.float_views.count(v)) continue;
      if (auto it = types_.find(v); it != types_.end()) {
        FailNode(on, "reads '" + v + "', an integer tensor (" +
                         std::string(QuantTypeName(it->second)) +
                         "): fusefuzz models integer tensors only as quantized values "
                         "(read by DequantizeLinear, QLinearConv, QLinearAdd, or moved by "
                         "MaxPool, Identity, Reshape, Flatten, Concat)");
      }
    }
  }
  // A Conv or Gemm param read from a dequantized constant declares that grid.
  void DeclareGrid(const ONode& on, size_t i, const char* role, Node* n) const {
    if (i >= on.inputs.size()) return;
    auto it = grids_.find(on.inputs[i]);
    if (it != grids_.end()) n->quant[role] = it->second;
  }

  Node Convert(const ONode& on) {
    if (std::string why = QuantizedOpNotModeled(on.op_type, on.domain); !why.empty()) {
      FailQ(on, "it is " + why);
    }
    if (!on.domain.empty() && on.domain != "ai.onnx" &&
        !(on.domain == "com.microsoft" && on.op_type == "QLinearAdd")) {
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
      DeclareGrid(on, 1, "W", &n);
      DeclareGrid(on, 2, "B", &n);
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
      if (d.size() != 2) FailNode(on, "dilations must have 2 entries (2-D only)");
      if (d != std::vector<int64_t>{1, 1}) n.attrs["dilations"] = d;
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
      // Both formats broadcast the slope from the right (ONNX): read as is.
      const Shape& x = ShapeOf(on.inputs[0], on);
      if (!BroadcastsTo(slope.shape, x)) {
        FailNode(on, "slope of shape " + ShapeToString(slope.shape) +
                         " does not broadcast to the input " + ShapeToString(x));
      }
      n.params["slope"] = std::move(slope);
    } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Min" || t == "Max") {
      n.op = *OpFromName(t);
      // ONNX Min/Max are variadic; fusefuzz's take two operands.
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
      if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
        FailNode(on, "mode \"" + mode + "\"");
      }
      std::vector<int64_t> p;
      double value = 0;
      if (on.attrs.count("pads")) {  // opset < 11
        p = AttrInts(on, "pads", {});
        value = AttrF(on, "value", 0);
      } else {
        const OTensor& pads = NeedConst(on, 1, "pads");
        if (pads.type != onnx::TensorProto::INT64) FailNode(on, "pads must be int64");
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
    } else if (t == "Flatten") {
      unary(Op::Flatten);
      n.attrs["axis"] = AttrI(on, "axis", 1);
    } else if (t == "Reshape") {
      unary(Op::Reshape);
      if (AttrI(on, "allowzero", 0) != 0) FailNode(on, "only allowzero 0");
      const OTensor& shape = NeedConst(on, 1, "shape");
      if (shape.type != onnx::TensorProto::INT64) FailNode(on, "shape must be int64");
      n.attrs["shape"] = shape.ints;
    } else if (t == "MatMul") {
      unary(Op::MatMul);
      n.params["B"] = FloatParam(on, 1, "B");
      if (n.params["B"].shape.size() != 2) FailNode(on, "B must be a constant matrix (rank 2)");
    } else if (t == "Gemm") {
      unary(Op::Gemm);
      n.params["B"] = FloatParam(on, 1, "B");
      if (on.inputs.size() > 2 && !on.inputs[2].empty()) n.params["C"] = FloatParam(on, 2, "C");
      DeclareGrid(on, 1, "B", &n);
      DeclareGrid(on, 2, "C", &n);
      n.attrs["alpha"] = AttrF(on, "alpha", 1.0f);
      n.attrs["beta"] = AttrF(on, "beta", 1.0f);
      n.attrs["transA"] = AttrI(on, "transA", 0);
      n.attrs["transB"] = AttrI(on, "transB", 0);
    } else if (t == "QuantizeLinear") {
      unary(Op::QuantizeLinear);
      n.quant["y"] = QuantOf(on, 1, on.inputs[0], "y", true, false);
      RefuseNewQuantAttrs(on, n.quant["y"].type);
      if (n.quant["y"].type == QuantType::kInt32) FailQ(on, "it quantizes to int32");
      if (n.quant["y"].PerAxis() && n.quant["y"].axis < 0) FailQ(on, "its axis is out of range");
    } else if (t == "DequantizeLinear") {
      unary(Op::DequantizeLinear);
      if (!types_.count(on.inputs[0])) {
        FailQ(on, "it dequantizes '" + on.inputs[0] +
                      "', which is not a uint8/int8 value of the model (from QuantizeLinear or "
                      "a graph input)");
      }
      n.quant["x"] = QuantOf(on, 1, on.inputs[0], "x", true, true);
      RefuseNewQuantAttrs(on, n.quant["x"].type);
    } else if (t == "QLinearConv") {
      ConvertQLinearConv(on, &n);
    } else if (t == "QLinearAdd") {  // com.microsoft: what ORT's QDQ Add fusion writes
      n.op = Op::QLinearAdd;
      value_input(0);
      value_input(3);
      n.quant["a"] = QuantOf(on, 1, on.inputs[0], "A", false, true);
      n.quant["b"] = QuantOf(on, 4, on.inputs[3], "B", false, true);
      n.quant["y"] = QuantOf(on, 6, on.inputs[0], "C", false, false);
    } else if (t == "ReduceMean") {
      unary(Op::ReduceMean);
      std::vector<int64_t> axes = AttrInts(on, "axes", {});
      if (const OTensor* a = Const(on, 1)) {  // opset 18: axes as an input
        if (a->type != onnx::TensorProto::INT64) FailNode(on, "axes must be int64");
        axes = a->ints;
      }
      if (axes.empty()) {
        if (AttrI(on, "noop_with_empty_axes", 0) != 0) FailNode(on, "only noop_with_empty_axes 0");
        const size_t rank = ShapeOf(on.inputs[0], on).size();  // ONNX: reduce every dim
        for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
      }
      n.attrs["axes"] = axes;
      n.attrs["keepdims"] = AttrI(on, "keepdims", 1);
    } else if (t == "Pow") {
      unary(Op::Pow);
      const double e = Scalar(on, 1, "exponent", 0);
      if (!IsSupportedExponent(e)) {
        FailNode(on, "the exponent must be a constant 0.5, 1, 2 or 3 (fusefuzz's Pow)");
      }
      n.attrs["exponent"] = e;
    } else if (t == "Sqrt" || t == "Reciprocal" || t == "Exp" || t == "Log" || t == "Erf") {
      unary(*OpFromName(t));
    } else if (t == "ReduceSum" || t == "ReduceMax") {
      unary(*OpFromName(t));
      std::vector<int64_t> axes = AttrInts(on, "axes", {});
      if (const OTensor* a = Const(on, 1)) {  // an input from opset 13 (Sum) or 18 (Max)
        if (a->type != onnx::TensorProto::INT64) FailNode(on, "axes must be int64");
        axes = a->ints;
      } else if (on.inputs.size() > 1 && !on.inputs[1].empty()) {
        FailNode(on, "axes must be a constant");
      }
      if (axes.empty()) {
        if (AttrI(on, "noop_with_empty_axes", 0) != 0) FailNode(on, "only noop_with_empty_axes 0");
        const size_t rank = ShapeOf(on.inputs[0], on).size();  // ONNX: reduce every dim
        for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
      }
      n.attrs["axes"] = axes;
      n.attrs["keepdims"] = AttrI(on, "keepdims", 1);
    } else if (t == "Softmax") {
      // Before opset 13 Softmax flattened to 2-D at `axis` (default 1): another function.
      if (opset_ < 13) FailNode(on, "Softmax before opset 13 (coerced to 2-D) is not fusefuzz's");
      unary(Op::Softmax);
      n.attrs["axis"] = AttrI(on, "axis", -1);
    } else if (t == "Transpose") {
      unary(Op::Transpose);
      std::vector<int64_t> perm = AttrInts(on, "perm", {});
      if (perm.empty()) {  // ONNX: reverse the dims
        const int64_t rank = static_cast<int64_t>(ShapeOf(on.inputs[0], on).size());
        for (int64_t d = rank; d-- > 0;) perm.push_back(d);
      }
      n.attrs["perm"] = perm;
    } else {
      FailNode(on, "not in fusefuzz's vocabulary (see `fusefuzz list ops`)");
    }
    return n;
  }

  // ONNX's QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
  // y_zero_point, B. fusefuzz's takes int8 symmetric weights (zero point 0).
  void ConvertQLinearConv(const ONode& on, Node* n) {
    n->op = Op::QLinearConv;
    if (on.inputs.empty() || consts_.count(on.inputs[0])) FailNode(on, "x must be a value");
    n->inputs.push_back(on.inputs[0]);
    n->quant["x"] = QuantOf(on, 1, on.inputs[0], "x", false, true);
    const OTensor& w = NeedConst(on, 3, "w");
    if (w.type != onnx::TensorProto::INT8) {
      FailQ(on, "its weights are " + OnnxTypeName(w.type) +
                    ": fusefuzz's QLinearConv takes int8 weights with zero point 0");
    }
    if (w.dims.size() != 4) FailNode(on, "only 2-D convolutions (rank-4 w)");
    n->quant["w"] = QuantOf(on, 4, on.inputs[3], "w", false, true);
    n->quant["y"] = QuantOf(on, 6, on.inputs[0], "y", false, false);
    n->params["W"] = Tensor(w.dims, w.floats);
    if (const OTensor* b = Const(on, 8)) {
      if (b->type != onnx::TensorProto::INT32) FailQ(on, "its bias is not int32");
      // fusefuzz holds the bias's integers as float32: beyond 2^24 they would round, silently
      // another model.
      for (size_t i = 0; i < b->ints.size(); ++i) {
        if (b->ints[i] > kMaxExactInt || b->ints[i] < -kMaxExactInt) {
          FailQ(on, "its int32 bias element " + std::to_string(i) + " = " +
                        std::to_string(b->ints[i]) +
                        " is beyond 2^24, not exact in float32 (fusefuzz's QLinearConv bias)");
        }
      }
      n->params["B"] = Tensor(b->dims, b->floats);
    } else if (on.inputs.size() > 8 && !on.inputs[8].empty()) {
      FailQ(on, "its bias (input 8) is not a constant");
    }
    auto s = AttrInts(on, "strides", {1, 1});
    auto d = AttrInts(on, "dilations", {1, 1});
    n->attrs["strides"] = s;
    n->attrs["dilations"] = d;
    n->attrs["pads"] = Pads(on, ShapeOf(on.inputs[0], on), {w.dims[2], w.dims[3]}, s, d);
    n->attrs["group"] = AttrI(on, "group", 1);
  }

  std::string src_;
  Limits limits_;
  std::vector<ONode> nodes_;
  std::vector<OValue> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, OTensor> consts_;
  std::map<std::string, std::string> bad_consts_;  // initializers that did not decode: why
  std::map<std::string, QuantType> types_;         // values of integer type
  std::map<std::string, QuantParams> grids_;       // constants dequantized from integers
  std::map<std::string, std::string> metadata_;
  std::map<std::string, Shape> shapes_;
  bool cut_mode_ = false;
  bool refuse_ = false;
  // The default domain's opset (Softmax's meaning changed at 13); ONNX's default when absent.
  int64_t opset_ = 1;
  std::vector<NodeRecord> records_;
  size_t record_keys_ = 0;
  std::map<std::string, Shape> inferred_;  // --cut: libonnx's shapes of every value
  CutImport cut_;
  std::vector<std::pair<size_t, std::string>> dropped_;  // --cut: (index in nodes_, why)
};

}  // namespace

Graph ImportOnnx(std::string_view model_bytes, const std::string& source, const Limits& limits,
                 OnnxImportInfo* info) {
  std::string why;
  {
    Importer refusing(source, limits, false, true);
    try {
      Graph g = refusing.Run(model_bytes);
      if (refusing.records() == 0) return g;
      why = ReexportDifference(g, model_bytes, source);
      if (why.empty()) {
        if (info) info->refused = static_cast<int64_t>(refusing.records());
        return g;
      }
      why = "exporting the re-fused graph does not give the model back (first difference: " + why +
            ")";
    } catch (const InputError& e) {
      if (refusing.records() == 0) throw;
      why = e.what();
    }
  }
  // The records do not describe this model: its decompositions are imported as plain ops.
  Graph g = Importer(source, limits, false, false).Run(model_bytes);
  if (info) info->not_refused = why;
  return g;
}

Graph ImportOnnxFile(const std::string& path, const Limits& limits, OnnxImportInfo* info) {
  return ImportOnnx(ReadModelFile(path, limits), path, limits, info);
}

CutImport ImportOnnxCut(std::string_view model_bytes, const std::string& source,
                        const Limits& limits) {
  Importer importer(source, limits, true, false);
  Graph g = importer.Run(model_bytes);
  CutImport r = std::move(importer.cut());
  r.graph = std::move(g);
  return r;
}

std::string ReadModelFile(const std::string& path, const Limits& limits) {
  // The documented file limit (1 GiB by default; protobuf itself parses less than 2 GiB).
  return ReadProtoFile(path, limits.max_file_bytes, onnx::ModelProto::descriptor(),
                       "an ONNX model (ModelProto)");
}

std::string OnnxModelWithOutputs(std::string_view model_bytes, const std::string& source,
                                 const std::vector<ValueInfo>& outputs) {
  onnx::ModelProto m;
  ParseProto(model_bytes, &m, source, "ONNX ModelProto");
  CheckModelProto(m, source);  // what goes to an engine is checked here too, not only by callers
  onnx::GraphProto* g = m.mutable_graph();
  g->clear_output();
  for (const ValueInfo& v : outputs) {
    onnx::ValueInfoProto* o = g->add_output();
    o->set_name(v.name);
    onnx::TypeProto::Tensor* t = o->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : v.shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return SerializeProto(m);
}

}  // namespace fusefuzz
