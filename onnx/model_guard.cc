// CheckModelProto (onnx/model_guard.h): a walk over every tensor a model holds, subgraphs
// included. Recursion is bounded by protobuf's own nesting limit (100) on parsing.
#include "onnx/model_guard.h"

#include <set>

#include "ir/error.h"

namespace fusefuzz {
namespace {

class Guard {
 public:
  explicit Guard(std::string source) : src_(std::move(source)) {}

  void Graph(const onnx::GraphProto& g, const std::string& where) {
    for (const onnx::TensorProto& t : g.initializer()) {
      Tensor(t, where + ": initializer " + Shown(t.name()));
    }
    for (const onnx::SparseTensorProto& t : g.sparse_initializer()) {
      Sparse(t, where + ": sparse initializer");
    }
    for (const onnx::NodeProto& n : g.node()) Node(n, where);
  }

  void Node(const onnx::NodeProto& n, const std::string& where) {
    const std::string at =
        where + ": node " + Shown(n.name()) + " (op type " + Shown(n.op_type()) + ")";
    for (const onnx::AttributeProto& a : n.attribute()) {
      const std::string attr = at + " attribute " + Shown(a.name());
      if (a.has_t()) Tensor(a.t(), attr);
      for (const onnx::TensorProto& t : a.tensors()) Tensor(t, attr);
      if (a.has_sparse_tensor()) Sparse(a.sparse_tensor(), attr);
      for (const onnx::SparseTensorProto& t : a.sparse_tensors()) Sparse(t, attr);
      if (a.has_g()) Graph(a.g(), attr + " (subgraph)");
      for (const onnx::GraphProto& g : a.graphs()) Graph(g, attr + " (subgraph)");
    }
  }

  void Tensor(const onnx::TensorProto& t, const std::string& where) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
      throw InputError(src_, where +
                                 ": refers to external data (a file beside the model); fusefuzz "
                                 "opens no file a model names, so such a model is refused");
    }
  }

  void Sparse(const onnx::SparseTensorProto& t, const std::string& where) {
    if (t.has_values()) Tensor(t.values(), where);
    if (t.has_indices()) Tensor(t.indices(), where);
  }

  // A name as it may be shown: quoted, cut at 64 bytes, control bytes as \xNN.
  static std::string Shown(const std::string& s) {
    std::string out = "'";
    for (size_t i = 0; i < s.size() && i < 64; ++i) {
      const auto b = static_cast<unsigned char>(s[i]);
      if (b < 0x20 || b == 0x7f) {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[b >> 4];
        out += hex[b & 15];
      } else {
        out += static_cast<char>(b);
      }
    }
    return out + (s.size() > 64 ? "...'" : "'");
  }

 private:
  std::string src_;
};

}  // namespace

void CheckModelProto(const onnx::ModelProto& m, const std::string& source) {
  if (m.has_ir_version() && (m.ir_version() < 1 || m.ir_version() > kMaxOnnxIrVersion)) {
    throw InputError(source, "ir_version " + std::to_string(m.ir_version()) +
                                 " is outside the versions fusefuzz reads (1.." +
                                 std::to_string(kMaxOnnxIrVersion) + ")");
  }
  std::set<std::string> domains;
  for (const onnx::OperatorSetIdProto& o : m.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    if (!domains.insert(domain).second) {
      throw InputError(
          source, "opset_import lists the domain " +
                      (domain.empty() ? std::string("ai.onnx") : Guard::Shown(domain)) + " twice");
    }
    if (domain.empty() && (o.version() < 1 || o.version() > kMaxOnnxOpset)) {
      throw InputError(source, "opset " + std::to_string(o.version()) +
                                   " of the default domain is outside the opsets fusefuzz reads "
                                   "(1.." +
                                   std::to_string(kMaxOnnxOpset) + ")");
    }
  }
  Guard guard(source);
  guard.Graph(m.graph(), "graph");
  for (const onnx::FunctionProto& f : m.functions()) {
    for (const onnx::NodeProto& n : f.node()) guard.Node(n, "function " + Guard::Shown(f.name()));
  }
  for (const onnx::TrainingInfoProto& t : m.training_info()) {
    guard.Graph(t.initialization(), "training_info initialization");
    guard.Graph(t.algorithm(), "training_info algorithm");
  }
}

}  // namespace fusefuzz
