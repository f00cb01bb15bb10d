// Building ONNX nodes and the names of an export (onnx/export.cc, onnx/export_quant.cc).
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

namespace fusefuzz {

// The float32 an ONNX float attribute holds. fusefuzz stores attributes as doubles; the
// generator already rounds them to float32, and the fast kernels round them the same way.
inline float ToF32(double v) { return static_cast<float>(v); }

// One ONNX node under construction, added to the graph by the exporter.
class NodeBuilder {
 public:
  NodeBuilder(const std::string& op_type, const std::string& name) {
    node_.set_op_type(op_type);
    node_.set_name(name);
  }
  NodeBuilder& In(const std::string& v) {
    node_.add_input(v);
    return *this;
  }
  NodeBuilder& Out(const std::string& v) {
    node_.add_output(v);
    return *this;
  }
  NodeBuilder& AttrF(const std::string& name, double v) {
    Attr(name, onnx::AttributeProto::FLOAT)->set_f(ToF32(v));
    return *this;
  }
  NodeBuilder& AttrI(const std::string& name, int64_t v) {
    Attr(name, onnx::AttributeProto::INT)->set_i(v);
    return *this;
  }
  NodeBuilder& AttrInts(const std::string& name, const std::vector<int64_t>& v) {
    onnx::AttributeProto* a = Attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  NodeBuilder& AttrS(const std::string& name, const std::string& v) {
    Attr(name, onnx::AttributeProto::STRING)->set_s(v);
    return *this;
  }
  const onnx::NodeProto& node() const { return node_; }

 private:
  onnx::AttributeProto* Attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto* a = node_.add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  onnx::NodeProto node_;
};

// A name not used by any value of the graph nor by an earlier fresh name.
inline std::string FreshName(std::set<std::string>* used, const std::string& base) {
  std::string name = base;
  for (int i = 1; used->count(name); ++i) name = base + "_" + std::to_string(i);
  used->insert(name);
  return name;
}

}  // namespace fusefuzz
