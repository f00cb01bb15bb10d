#include "ir/graph.h"

#include <cmath>

#include "ir/error.h"

namespace fusefuzz {

std::string_view EpilogueKindName(EpilogueKind k) {
  switch (k) {
    case EpilogueKind::kScaleShift:
      return "scale_shift";
    case EpilogueKind::kAdd:
      return "add";
    case EpilogueKind::kActivation:
      return "activation";
    case EpilogueKind::kClamp:
      return "clamp";
  }
  return "?";
}

const Node* Graph::Producer(const std::string& value) const {
  int i = ProducerIndex(value);
  return i < 0 ? nullptr : &nodes[static_cast<size_t>(i)];
}
int Graph::ProducerIndex(const std::string& value) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].output == value) return static_cast<int>(i);
  return -1;
}
const Node* Graph::FindNode(const std::string& name) const {
  int i = NodeIndex(name);
  return i < 0 ? nullptr : &nodes[static_cast<size_t>(i)];
}
int Graph::NodeIndex(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}
std::vector<int> Graph::Consumers(const std::string& value) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs) {
      if (in == value) {
        out.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  return out;
}
bool Graph::IsGraphOutput(const std::string& value) const {
  for (const auto& o : outputs)
    if (o == value) return true;
  return false;
}
bool Graph::IsGraphInput(const std::string& value) const {
  for (const auto& i : inputs)
    if (i.name == value) return true;
  return false;
}

namespace {

const AttrSpec& Spec(Op op, const std::string& name, const std::string& where) {
  const AttrSpec* s = FindAttrSpec(op, name);
  if (!s) {
    throw InputError(where, std::string(OpName(op)) + " has no attribute '" + name + "'");
  }
  return *s;
}

template <typename T>
const T* Lookup(Op op, const AttrMap& attrs, const std::string& name, const std::string& where) {
  const AttrSpec& spec = Spec(op, name, where);
  auto it = attrs.find(name);
  if (it == attrs.end()) {
    if (spec.required) {
      throw InputError(where,
                       "missing required attribute '" + name + "' of " + std::string(OpName(op)));
    }
    return nullptr;
  }
  const T* v = std::get_if<T>(&it->second);
  if (!v) {
    throw InputError(where,
                     "attribute '" + name + "' must be " + std::string(AttrTypeName(spec.type)));
  }
  return v;
}

std::string Where(const Node& n) { return "node '" + n.name + "'"; }

}  // namespace

int64_t AttrInt(Op op, const AttrMap& attrs, const std::string& name, const std::string& where) {
  const int64_t* v = Lookup<int64_t>(op, attrs, name, where);
  return v ? *v : Spec(op, name, where).default_int;
}
double AttrFloat(Op op, const AttrMap& attrs, const std::string& name, const std::string& where) {
  // Integers are accepted where a float is expected (JSON "1" for 1.0).
  auto it = attrs.find(name);
  if (it != attrs.end()) {
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  }
  const double* v = Lookup<double>(op, attrs, name, where);
  return v ? *v : Spec(op, name, where).default_float;
}
std::vector<int64_t> AttrInts(Op op, const AttrMap& attrs, const std::string& name,
                              const std::string& where) {
  const auto* v = Lookup<std::vector<int64_t>>(op, attrs, name, where);
  return v ? *v : Spec(op, name, where).default_ints;
}
std::string AttrString(Op op, const AttrMap& attrs, const std::string& name,
                       const std::string& where) {
  const std::string* v = Lookup<std::string>(op, attrs, name, where);
  return v ? *v : Spec(op, name, where).default_string;
}

int64_t AttrInt(const Node& n, const std::string& name) {
  return AttrInt(n.op, n.attrs, name, Where(n));
}
double AttrFloat(const Node& n, const std::string& name) {
  return AttrFloat(n.op, n.attrs, name, Where(n));
}
std::vector<int64_t> AttrInts(const Node& n, const std::string& name) {
  return AttrInts(n.op, n.attrs, name, Where(n));
}
std::string AttrString(const Node& n, const std::string& name) {
  return AttrString(n.op, n.attrs, name, Where(n));
}

namespace {
std::vector<int64_t> FixedInts(const Node& n, const std::string& name, size_t count) {
  auto v = AttrInts(n, name);
  if (v.size() != count) {
    throw InputError(Where(n), "attribute '" + name + "' must have " + std::to_string(count) +
                                   " entries, got " + std::to_string(v.size()));
  }
  return v;
}
}  // namespace

ConvAttrs GetConvAttrs(const Node& n) {
  ConvAttrs a;
  auto s = FixedInts(n, "strides", 2);
  auto d = FixedInts(n, "dilations", 2);
  auto p = FixedInts(n, "pads", 4);
  a.stride_h = s[0], a.stride_w = s[1];
  a.dilation_h = d[0], a.dilation_w = d[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.group = AttrInt(n, "group");
  return a;
}

PoolAttrs GetPoolAttrs(const Node& n) {
  PoolAttrs a;
  auto k = FixedInts(n, "kernel_shape", 2);
  auto s = FixedInts(n, "strides", 2);
  auto p = FixedInts(n, "pads", 4);
  auto d = FixedInts(n, "dilations", 2);
  a.kernel_h = k[0], a.kernel_w = k[1];
  a.stride_h = s[0], a.stride_w = s[1];
  a.dilation_h = d[0], a.dilation_w = d[1];
  a.pad_top = p[0], a.pad_left = p[1], a.pad_bottom = p[2], a.pad_right = p[3];
  a.ceil_mode = AttrInt(n, "ceil_mode") != 0;
  if (n.op == Op::AvgPool) a.count_include_pad = AttrInt(n, "count_include_pad") != 0;
  return a;
}

GemmDims GetGemmDims(const Node& n, const Shape& a) {
  GemmDims d;
  const Shape& b = n.params.at("B").shape;
  if (n.op == Op::Gemm) {
    d.alpha = AttrFloat(n, "alpha");
    d.beta = AttrFloat(n, "beta");
    d.trans_a = AttrInt(n, "transA") != 0;
    d.trans_b = AttrInt(n, "transB") != 0;
  }
  const size_t r = a.size();
  d.m = d.trans_a ? a[r - 1] : a[r - 2];
  d.k = d.trans_a ? a[r - 2] : a[r - 1];
  d.n = d.trans_b ? b[0] : b[1];
  return d;
}

BinaryOperands GetBinaryOperands(const Node& n) {
  BinaryOperands b;
  auto a_it = n.params.find("A");
  auto b_it = n.params.find("B");
  if (a_it != n.params.end()) b.const_a = &a_it->second;
  if (b_it != n.params.end()) b.const_b = &b_it->second;
  int next = 0;
  if (!b.const_a) b.input_a = next++;
  if (!b.const_b) b.input_b = next++;
  return b;
}

void DropDefaultAttrs(Op op, AttrMap& attrs) {
  for (auto it = attrs.begin(); it != attrs.end();) {
    const AttrSpec* spec = FindAttrSpec(op, it->first);
    const AttrValue& v = it->second;
    bool is_default = false;
    if (spec && !spec->required) {
      switch (spec->type) {
        case AttrType::kInt:
          is_default =
              std::holds_alternative<int64_t>(v) && std::get<int64_t>(v) == spec->default_int;
          break;
        case AttrType::kFloat:
          // -0.0 is not the default 0.0: a Pad value of -0 pads with -0 (1/x tells them apart).
          is_default = std::holds_alternative<double>(v) &&
                       std::get<double>(v) == spec->default_float &&
                       std::signbit(std::get<double>(v)) == std::signbit(spec->default_float);
          break;
        case AttrType::kInts:
          is_default = std::holds_alternative<std::vector<int64_t>>(v) &&
                       std::get<std::vector<int64_t>>(v) == spec->default_ints;
          break;
        case AttrType::kString:
          is_default = std::holds_alternative<std::string>(v) &&
                       std::get<std::string>(v) == spec->default_string;
          break;
      }
    }
    it = is_default ? attrs.erase(it) : std::next(it);
  }
}

}  // namespace fusefuzz
