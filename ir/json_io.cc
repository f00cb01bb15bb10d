// Graph JSON v1: reader (structure checks with JSON pointers, topological sort, verification)
// and writer. Tensors, files and the pretty printer are in ir/json_tensor.cc.
#include "ir/json_io.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>

#include "ir/error.h"
#include "ir/graph_migrate.h"
#include "ir/json_internal.h"
#include "ir/spelling.h"
#include "ir/verifier.h"

namespace fusefuzz {

using json_detail::Escape;
using json_detail::Fail;
using json_detail::OJson;
using json_detail::Quote;
using json_detail::ReadCtx;
using json_detail::TypeName;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "fusefuzz-graph";

void CheckKeys(const json& j, const ReadCtx& c, const std::string& pointer,
               std::initializer_list<std::string_view> allowed, const std::string& what) {
  for (const auto& [key, v] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Fail(c, pointer + "/" + Escape(key), "unknown key in " + what + " (expected " + list + ")");
    }
  }
}

const json& Require(const json& j, const ReadCtx& c, const std::string& pointer, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) Fail(c, pointer, std::string("missing required key \"") + key + "\"");
  return *it;
}

std::string ReadName(const json& j, const ReadCtx& c, const std::string& pointer) {
  if (!j.is_string()) Fail(c, pointer, "must be a string, got " + TypeName(j));
  const auto& s = j.get_ref<const std::string&>();
  if (s.empty()) Fail(c, pointer, "must not be empty");
  if (s.size() > 256) Fail(c, pointer, "name longer than 256 characters");
  return s;
}

int64_t ReadInt(const json& j, const ReadCtx& c, const std::string& pointer) {
  if (!j.is_number_integer()) Fail(c, pointer, "must be an integer, got " + TypeName(j));
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{INT64_MAX}) {
    Fail(c, pointer, "integer out of range");
  }
  return j.get<int64_t>();
}

AttrValue ReadAttr(const json& j, const AttrSpec& spec, const ReadCtx& c,
                   const std::string& pointer) {
  switch (spec.type) {
    case AttrType::kInt:
      return ReadInt(j, c, pointer);
    case AttrType::kFloat: {
      // Integers are accepted; stored as double so consumers see one type, rounded to float32
      // as ONNX stores attributes: a graph means the same in JSON and in ONNX, bit for bit.
      float f = 0;
      if (!json_detail::DoubleToFloat(json_detail::ReadDouble(j, c, pointer), &f)) {
        Fail(c, pointer, "outside the float32 range");
      }
      return static_cast<double>(f);
    }
    case AttrType::kInts: {
      if (!j.is_array()) Fail(c, pointer, "must be an array of integers, got " + TypeName(j));
      if (j.size() > 8) Fail(c, pointer, "more than 8 entries");
      std::vector<int64_t> v;
      for (size_t i = 0; i < j.size(); ++i) {
        v.push_back(ReadInt(j[i], c, pointer + "/" + std::to_string(i)));
      }
      return v;
    }
    case AttrType::kString:
      if (!j.is_string()) Fail(c, pointer, "must be a string, got " + TypeName(j));
      if (j.get_ref<const std::string&>().size() > 64) Fail(c, pointer, "string too long");
      return j.get<std::string>();
  }
  Fail(c, pointer, "unknown attribute type");
}

AttrMap ReadAttrs(const json* j, Op op, const ReadCtx& c, const std::string& pointer) {
  AttrMap out;
  if (j) {
    if (!j->is_object()) Fail(c, pointer, "must be an object, got " + TypeName(*j));
    for (const auto& [key, v] : j->items()) {
      const AttrSpec* spec = FindAttrSpec(op, key);
      if (!spec) {
        std::string valid;
        for (const auto& a : SchemaOf(op).attrs) valid += (valid.empty() ? "" : ", ") + a.name;
        Fail(c, pointer + "/" + Escape(key),
             "unknown attribute " + Quote(key) + " for " + std::string(OpName(op)) +
                 " (valid: " + (valid.empty() ? "none" : valid) + ")");
      }
      out.emplace(key, ReadAttr(v, *spec, c, pointer + "/" + Escape(key)));
    }
  }
  for (const auto& spec : SchemaOf(op).attrs) {
    if (spec.required && !out.count(spec.name)) {
      Fail(c, pointer,
           "missing required attribute '" + spec.name + "' of " + std::string(OpName(op)) + " (" +
               std::string(AttrTypeName(spec.type)) + ")");
    }
  }
  return out;
}

ParamMap ReadParams(const json* j, Op op, ReadCtx& c, const std::string& pointer) {
  ParamMap out;
  if (j) {
    if (!j->is_object()) Fail(c, pointer, "must be an object, got " + TypeName(*j));
    for (const auto& [key, v] : j->items()) {
      if (!FindParamSpec(op, key)) {
        std::string valid;
        for (const auto& p : SchemaOf(op).params) valid += (valid.empty() ? "" : ", ") + p.name;
        Fail(c, pointer + "/" + Escape(key),
             "unknown param " + Quote(key) + " for " + std::string(OpName(op)) +
                 " (valid: " + (valid.empty() ? "none" : valid) + ")");
      }
      out.emplace(key, json_detail::ReadTensorAt(v, c, pointer + "/" + Escape(key)));
    }
  }
  for (const auto& spec : SchemaOf(op).params) {
    if (spec.required && !out.count(spec.name)) {
      Fail(c, pointer,
           "missing required param '" + spec.name + "' of " + std::string(OpName(op)) + " (shape " +
               spec.doc + ")");
    }
  }
  return out;
}

const json* Optional(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

EpilogueStep ReadStep(const json& j, const Node& n, ReadCtx& c, const std::string& p) {
  if (!j.is_object()) Fail(c, p, "an epilogue step must be an object, got " + TypeName(j));
  const json& kind = Require(j, c, p, "kind");
  if (!kind.is_string()) Fail(c, p + "/kind", "must be a string, got " + TypeName(kind));
  const std::string& k = kind.get_ref<const std::string&>();
  EpilogueStep s;
  if (k == "scale_shift") {
    CheckKeys(j, c, p, {"kind", "params"}, "a scale_shift step");
    s.kind = EpilogueKind::kScaleShift;
    const json& params = Require(j, c, p, "params");
    if (!params.is_object()) Fail(c, p + "/params", "must be an object, got " + TypeName(params));
    CheckKeys(params, c, p + "/params", {"scale", "shift"}, "scale_shift params");
    for (const char* name : {"scale", "shift"}) {
      s.params.emplace(name, json_detail::ReadTensorAt(Require(params, c, p + "/params", name), c,
                                                       p + "/params/" + name));
    }
  } else if (k == "add") {
    CheckKeys(j, c, p, {"kind", "input"}, "an add step");
    s.kind = EpilogueKind::kAdd;
    int64_t in = ReadInt(Require(j, c, p, "input"), c, p + "/input");
    if (in < 1 || in >= static_cast<int64_t>(n.inputs.size())) {
      Fail(c, p + "/input",
           "add refers to input " + std::to_string(in) + " but node '" + n.name + "' has " +
               std::to_string(n.inputs.size()) + " input(s) (input 0 is the conv's; use 1..)");
    }
    s.input = static_cast<int>(in);
  } else if (k == "activation") {
    CheckKeys(j, c, p, {"kind", "op", "attrs", "params"}, "an activation step");
    s.kind = EpilogueKind::kActivation;
    const json& op = Require(j, c, p, "op");
    if (!op.is_string()) Fail(c, p + "/op", "must be a string, got " + TypeName(op));
    auto act = OpFromName(op.get_ref<const std::string&>());
    if (!act || !IsActivation(*act)) {
      Fail(c, p + "/op", Quote(op.get_ref<const std::string&>()) + " is not an activation op");
    }
    s.act = *act;
    s.attrs = ReadAttrs(Optional(j, "attrs"), s.act, c, p + "/attrs");
    s.params = ReadParams(Optional(j, "params"), s.act, c, p + "/params");
  } else if (k == "clamp") {
    CheckKeys(j, c, p, {"kind", "attrs"}, "a clamp step");
    s.kind = EpilogueKind::kClamp;
    s.attrs = ReadAttrs(&Require(j, c, p, "attrs"), Op::Clip, c, p + "/attrs");
  } else {
    Fail(c, p + "/kind",
         "unknown epilogue kind " + Quote(k) + " (expected scale_shift, add, activation or clamp)");
  }
  return s;
}

Node ReadNode(const json& j, ReadCtx& c, const std::string& p) {
  if (!j.is_object()) Fail(c, p, "a node must be an object, got " + TypeName(j));
  CheckKeys(j, c, p,
            {"name", "op", "inputs", "outputs", "attrs", "params", "epilogue", "quant", "spelling"},
            "a node");
  Node n;
  n.name = ReadName(Require(j, c, p, "name"), c, p + "/name");
  const json& op = Require(j, c, p, "op");
  if (!op.is_string()) Fail(c, p + "/op", "must be a string, got " + TypeName(op));
  auto o = OpFromName(op.get_ref<const std::string&>());
  if (!o) {
    Fail(c, p + "/op",
         "unknown op " + Quote(op.get_ref<const std::string&>()) +
             " (see docs/graph-format.md for the list)");
  }
  n.op = *o;
  const json& inputs = Require(j, c, p, "inputs");
  if (!inputs.is_array()) Fail(c, p + "/inputs", "must be an array of value names");
  if (inputs.size() > 64) Fail(c, p + "/inputs", "more than 64 inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    n.inputs.push_back(ReadName(inputs[i], c, p + "/inputs/" + std::to_string(i)));
  }
  const json& outputs = Require(j, c, p, "outputs");
  if (!outputs.is_array() || outputs.size() != 1) {
    Fail(c, p + "/outputs", "must be an array of exactly one value name (nodes have one output)");
  }
  n.output = ReadName(outputs[0], c, p + "/outputs/0");
  n.attrs = ReadAttrs(Optional(j, "attrs"), n.op, c, p + "/attrs");
  n.params = ReadParams(Optional(j, "params"), n.op, c, p + "/params");
  if (const json* e = Optional(j, "epilogue")) {
    if (n.op != Op::FusedConv && n.op != Op::Gemm && n.op != Op::QLinearConv) {
      Fail(c, p + "/epilogue", "only FusedConv, QLinearConv and Gemm have an epilogue");
    }
    if (!e->is_array()) Fail(c, p + "/epilogue", "must be an array, got " + TypeName(*e));
    if (e->size() > 16) Fail(c, p + "/epilogue", "more than 16 steps");
    for (size_t i = 0; i < e->size(); ++i) {
      n.epilogue.push_back(ReadStep((*e)[i], n, c, p + "/epilogue/" + std::to_string(i)));
    }
  }
  if (const json* q = Optional(j, "quant")) {
    n.quant = json_detail::ReadQuantMap(*q, n.op, c, p + "/quant");
  }
  if (const json* s = Optional(j, "spelling")) {
    // Known names here; whether the node can take it: VerifyGraph (ir/spelling.h).
    if (!s->is_string() || !SpellingFromName(s->get_ref<const std::string&>())) {
      Fail(c, p + "/spelling", "unknown spelling " + s->dump() + " (fusefuzz list spellings)");
    }
    n.spelling = s->get_ref<const std::string&>();
  }
  return n;
}

// Stable topological order: Kahn's algorithm that always takes the earliest ready node in file
// order, so files already in order keep it. Returns file indices; reports a cycle by its nodes.
std::vector<size_t> TopoOrder(const std::vector<Node>& nodes, const ReadCtx& c) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) producer.emplace(nodes[i].output, i);
  std::vector<std::vector<size_t>> preds(nodes.size()), succs(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs) {
      auto it = producer.find(in);
      if (it == producer.end()) continue;  // a graph input, or dangling: the verifier says which
      preds[i].push_back(it->second);
      succs[it->second].push_back(i);
    }
  }
  std::vector<size_t> pending(nodes.size());
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    pending[i] = preds[i].size();
    if (!pending[i]) ready.push(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t s : succs[i]) {
      if (--pending[s] == 0) ready.push(s);
    }
  }
  if (order.size() == nodes.size()) return order;
  // Every node left has a predecessor left: walk predecessors until one repeats.
  size_t start = 0;
  while (!pending[start]) ++start;
  std::vector<size_t> path;
  std::vector<int> seen(nodes.size(), -1);
  size_t cur = start;
  while (seen[cur] < 0) {
    seen[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    for (size_t p : preds[cur]) {
      if (pending[p]) {
        cur = p;
        break;
      }
    }
  }
  std::vector<size_t> cycle(path.begin() + seen[cur], path.end());
  std::reverse(cycle.begin(), cycle.end());  // data-flow order
  // Start at the node that comes first in the file, so the message is the same for any start.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string names;
  for (size_t i : cycle) names += "'" + nodes[i].name + "' -> ";
  names += "'" + nodes[cycle[0]].name + "'";
  Fail(c, "/nodes/" + std::to_string(cycle[0]), "cycle through nodes " + names);
}

// Maps a verifier location ("node 'x' ...", "graph input 'x'", "graph output 'y'") to a JSON
// pointer in the file.
std::string PointerFor(const std::string& where, const Graph& g,
                       const std::vector<size_t>& file_index) {
  size_t best = std::string::npos, best_len = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::string prefix = "node '" + g.nodes[i].name + "'";
    if (where.rfind(prefix, 0) == 0 && prefix.size() > best_len) {
      best = i;
      best_len = prefix.size();
    }
  }
  if (best != std::string::npos) {
    return "/nodes/" + std::to_string(file_index[best]) +
           json_detail::QuantPointer(std::string_view(where).substr(best_len));
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (where == "graph input '" + g.inputs[i].name + "'") return "/inputs/" + std::to_string(i);
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (where == "graph output '" + g.outputs[i] + "'") return "/outputs/" + std::to_string(i);
  }
  return "/";
}

}  // namespace

Graph ReadGraph(const json& j, const std::string& source, const Limits& limits) {
  ReadCtx c{source, limits};
  if (!j.is_object()) Fail(c, "", "a graph must be a JSON object, got " + TypeName(j));
  auto f = j.find("format");
  if (f == j.end()) {
    Fail(c, "/format", "missing; not a fusefuzz graph (expected \"format\": \"fusefuzz-graph\")");
  }
  if (!f->is_string()) Fail(c, "/format", "must be the string \"fusefuzz-graph\"");
  const std::string& fmt = f->get_ref<const std::string&>();
  if (fmt == "fusefuzz-repro") {
    Fail(c, "/format",
         "this is a reproducer (\"fusefuzz-repro\"), not a graph; its graph is "
         "the \"graph\" member, or replay the reproducer as a whole");
  }
  if (fmt != kFormat) Fail(c, "/format", "expected \"fusefuzz-graph\", got " + Quote(fmt));
  int64_t version = ReadInt(Require(j, c, "", "version"), c, "/version");
  if (version != 1 && version != kGraphFormatVersion) {
    Fail(c, "/version",
         "unsupported version " + std::to_string(version) + " (this build reads versions 1 and " +
             std::to_string(kGraphFormatVersion) + ")");
  }
  CheckKeys(j, c, "",
            {"format", "version", "doc", "provenance", "options", "inputs", "nodes", "outputs"},
            "a graph");
  if (const json* doc = Optional(j, "doc"); doc && !doc->is_string()) {
    Fail(c, "/doc", "must be a string");
  }
  Graph g;
  if (const json* o = Optional(j, "options"))
    g.options = json_detail::ReadGraphOptions(*o, c, "/options");
  const json& inputs = Require(j, c, "", "inputs");
  if (!inputs.is_array()) Fail(c, "/inputs", "must be an array, got " + TypeName(inputs));
  if (static_cast<int64_t>(inputs.size()) > limits.max_nodes) {
    Fail(c, "/inputs", "more than " + std::to_string(limits.max_nodes) + " inputs");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string p = "/inputs/" + std::to_string(i);
    const json& in = inputs[i];
    if (!in.is_object()) Fail(c, p, "must be an object {\"name\", \"shape\"}");
    CheckKeys(in, c, p, {"name", "shape"}, "a graph input");
    g.inputs.push_back({ReadName(Require(in, c, p, "name"), c, p + "/name"),
                        json_detail::ReadShape(Require(in, c, p, "shape"), c, p + "/shape")});
  }
  const json& nodes = Require(j, c, "", "nodes");
  if (!nodes.is_array()) Fail(c, "/nodes", "must be an array, got " + TypeName(nodes));
  if (static_cast<int64_t>(nodes.size()) > limits.max_nodes) {
    Fail(c, "/nodes",
         std::to_string(nodes.size()) + " nodes exceed the limit of " +
             std::to_string(limits.max_nodes));
  }
  std::vector<Node> file_nodes;
  std::map<std::string, size_t> names, values;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!values.emplace(g.inputs[i].name, i).second) {
      Fail(c, "/inputs/" + std::to_string(i) + "/name",
           "duplicate graph input " + Quote(g.inputs[i].name));
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string p = "/nodes/" + std::to_string(i);
    Node n = ReadNode(nodes[i], c, p);
    if (auto [it, ok] = names.emplace(n.name, i); !ok) {
      Fail(c, p + "/name",
           "duplicate node name " + Quote(n.name) + " (also /nodes/" + std::to_string(it->second) +
               ")");
    }
    if (!values.emplace(n.output, i).second) {
      Fail(c, p + "/outputs/0",
           "value " + Quote(n.output) +
               " is already defined (a graph input or another node's "
               "output; values are SSA)");
    }
    file_nodes.push_back(std::move(n));
  }
  const json& outputs = Require(j, c, "", "outputs");
  if (!outputs.is_array()) Fail(c, "/outputs", "must be an array, got " + TypeName(outputs));
  if (outputs.empty()) Fail(c, "/outputs", "must list at least one value");
  if (static_cast<int64_t>(outputs.size()) > limits.max_nodes) Fail(c, "/outputs", "too many");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string p = "/outputs/" + std::to_string(i);
    std::string name = ReadName(outputs[i], c, p);
    if (!values.count(name)) Fail(c, p, "graph output " + Quote(name) + " is not defined");
    if (std::find(g.outputs.begin(), g.outputs.end(), name) != g.outputs.end()) {
      Fail(c, p, "graph output " + Quote(name) + " is listed twice");
    }
    g.outputs.push_back(std::move(name));
  }
  std::vector<size_t> order = TopoOrder(file_nodes, c);
  for (size_t i : order) g.nodes.push_back(std::move(file_nodes[i]));
  if (version == 1) MigrateV1PReluSlopes(g);  // a [C] slope meant per channel
  try {
    VerifyGraph(g, limits);
  } catch (const InputError& e) {
    throw InputError(source + ": " + PointerFor(e.where(), g, order) + ": " + e.where(),
                     e.problem());
  }
  return g;
}

Graph ReadGraphFile(const std::string& path, const Limits& limits) {
  return ReadGraph(ReadJsonFile(path, limits), path, limits);
}

Graph ParseGraph(const std::string& text, const std::string& source, const Limits& limits) {
  return ReadGraph(ParseJson(text, source, limits), source, limits);
}

void CheckTensorsForGraph(const Graph& g, const TensorMap& tensors, const std::string& source,
                          const std::string& prefix) {
  const Limits limits;
  ReadCtx c{source, limits};
  std::string names;
  for (const auto& in : g.inputs) names += (names.empty() ? "" : ", ") + in.name;
  for (const auto& in : g.inputs) {
    auto it = tensors.find(in.name);
    if (it == tensors.end()) {
      Fail(c, prefix.empty() ? "/" : prefix, "no tensor for graph input " + Quote(in.name));
    }
    if (it->second.shape != in.shape) {
      Fail(c, prefix + "/" + Escape(in.name) + "/shape",
           "shape " + ShapeToString(it->second.shape) + " differs from graph input " +
               Quote(in.name) + " " + ShapeToString(in.shape));
    }
  }
  for (const auto& entry : tensors) {
    const std::string& name = entry.first;  // not a structured binding: lambdas capture it
    bool is_input = std::any_of(g.inputs.begin(), g.inputs.end(),
                                [&](const ValueInfo& in) { return in.name == name; });
    if (!is_input) {
      Fail(c, prefix + "/" + Escape(name),
           "tensor " + Quote(name) +
               " is not an input of the graph (inputs: " + (names.empty() ? "none" : names) + ")");
    }
  }
  // A graph input read as integers (by a DequantizeLinear, QLinearConv or QLinearAdd) must hold
  // integers of that type: said here, naming the file, rather than by the node at run time.
  for (const Node& n : g.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const char* role = n.op == Op::DequantizeLinear ? (i == 0 ? "x" : nullptr)
                         : n.op == Op::QLinearConv    ? (i == 0 ? "x" : "r")
                         : n.op == Op::QLinearAdd     ? (i == 0 ? "a" : "b")
                                                      : nullptr;
      auto t = tensors.find(n.inputs[i]);
      if (!role || !n.quant.count(role) || t == tensors.end()) continue;
      const QuantType type = n.quant.at(role).type;
      const double lo = type == QuantType::kInt32 ? -double(kMaxExactInt) : double(QMin(type));
      const double hi = type == QuantType::kInt32 ? double(kMaxExactInt) : double(QMax(type));
      const std::vector<float>& data = t->second.data;
      for (size_t k = 0; k < data.size(); ++k) {
        const double v = data[k];
        if (!(v == std::nearbyint(v) && v >= lo && v <= hi)) {
          Fail(c, prefix + "/" + Escape(n.inputs[i]),
               "element " + std::to_string(k) + " is " + json_detail::DoubleToJson(v).dump() +
                   ", but node " + Quote(n.name) + " (" + std::string(OpName(n.op)) +
                   ") reads it as " + std::string(QuantTypeName(type)) + " integers");
        }
      }
    }
  }
}

namespace {

// A float attribute: float32 values (all that JSON reading and ONNX import produce) in the
// shortest form that reads back to the same float32 ("0.1", not "0.10000000149011612").
OJson FloatAttrToJson(double d) {
  if (std::isfinite(d) && (std::fabs(d) > std::numeric_limits<float>::max() ||
                           static_cast<double>(static_cast<float>(d)) != d)) {
    return json_detail::DoubleToJson(d);  // built in code, not a float32 value
  }
  return json_detail::FloatToJson(static_cast<float>(d));
}

OJson AttrsToJson(Op op, const AttrMap& attrs) {
  OJson j = OJson::object();
  for (const auto& [name, v] : attrs) {
    const AttrSpec* spec = FindAttrSpec(op, name);
    bool is_float = spec && spec->type == AttrType::kFloat;
    if (const auto* i = std::get_if<int64_t>(&v)) {
      // A float attr given as an integer is written as the float it means.
      j[name] = is_float ? FloatAttrToJson(static_cast<double>(*i)) : OJson(*i);
    } else if (const auto* d = std::get_if<double>(&v)) {
      j[name] = FloatAttrToJson(*d);
    } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&v)) {
      j[name] = *ints;
    } else {
      j[name] = std::get<std::string>(v);
    }
  }
  return j;
}

OJson ParamsToJson(const ParamMap& params, bool plain) {
  OJson j = OJson::object();
  for (const auto& [name, t] : params) j[name] = json_detail::TensorToOJson(t, plain);
  return j;
}

OJson StepToJson(const EpilogueStep& s, bool plain) {
  OJson j = OJson::object();
  j["kind"] = std::string(EpilogueKindName(s.kind));
  switch (s.kind) {
    case EpilogueKind::kScaleShift:
      j["params"] = ParamsToJson(s.params, plain);
      break;
    case EpilogueKind::kAdd:
      j["input"] = s.input;
      break;
    case EpilogueKind::kActivation:
      j["op"] = std::string(OpName(s.act));
      if (!s.attrs.empty()) j["attrs"] = AttrsToJson(s.act, s.attrs);
      if (!s.params.empty()) j["params"] = ParamsToJson(s.params, plain);
      break;
    case EpilogueKind::kClamp:
      j["attrs"] = AttrsToJson(Op::Clip, s.attrs);
      break;
  }
  return j;
}

OJson GraphToOJson(const Graph& g, const WriteOptions& opts) {
  OJson j = OJson::object();
  j["format"] = kFormat;
  j["version"] = kGraphFormatVersion;
  if (g.options != GraphOptions{}) j["options"] = json_detail::GraphOptionsToJson(g.options);
  OJson inputs = OJson::array();
  for (const auto& in : g.inputs) {
    OJson i = OJson::object();
    i["name"] = in.name;
    i["shape"] = in.shape;
    inputs.push_back(std::move(i));
  }
  j["inputs"] = std::move(inputs);
  OJson nodes = OJson::array();
  for (const auto& n : g.nodes) {
    OJson o = OJson::object();
    o["name"] = n.name;
    o["op"] = std::string(OpName(n.op));
    o["inputs"] = n.inputs;
    o["outputs"] = OJson::array({n.output});
    if (!n.attrs.empty()) o["attrs"] = AttrsToJson(n.op, n.attrs);
    if (!n.params.empty()) o["params"] = ParamsToJson(n.params, opts.plain);
    if (!n.epilogue.empty()) {
      OJson e = OJson::array();
      for (const auto& s : n.epilogue) e.push_back(StepToJson(s, opts.plain));
      o["epilogue"] = std::move(e);
    }
    if (!n.quant.empty()) o["quant"] = json_detail::QuantMapToJson(n.quant);
    if (!n.spelling.empty()) o["spelling"] = n.spelling;
    nodes.push_back(std::move(o));
  }
  j["nodes"] = std::move(nodes);
  j["outputs"] = g.outputs;
  return j;
}

}  // namespace

json GraphToJson(const Graph& g, const WriteOptions& opts) { return json(GraphToOJson(g, opts)); }

std::string WriteGraph(const Graph& g, const WriteOptions& opts) {
  return json_detail::Pretty(GraphToOJson(g, opts), opts.indent) + "\n";
}

}  // namespace fusefuzz
