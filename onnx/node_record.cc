#include "onnx/node_record.h"

#include <algorithm>
#include <set>

#include "ir/error.h"
#include "ir/graph_migrate.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/proto_io.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

// Replaces every {"initializer", "shape"} of `params` by the tensor it stands for.
void ResolveTensors(json* params, const std::string& where,
                    const std::function<const std::vector<float>*(const std::string&)>& floats_of,
                    const Limits& limits) {
  if (!params->is_object()) throw InputError(where, "params must be an object");
  for (auto& [name, ref] : params->items()) {
    const std::string at = where + "/" + name;
    // A tensor written inline (a spelled node's record): the graph reader checks it.
    if (ref.is_object() && !ref.contains("initializer") &&
        (ref.contains("data") || ref.contains("b64"))) {
      continue;
    }
    if (!ref.is_object() || !ref.contains("initializer") || !ref.contains("shape") ||
        !ref["initializer"].is_string() || !ref["shape"].is_array()) {
      throw InputError(at, "expected {\"initializer\": name, \"shape\": [...]}");
    }
    const std::vector<float>* data = floats_of(ref["initializer"].get<std::string>());
    if (!data) {
      throw InputError(at, "no float initializer named " + ref["initializer"].dump());
    }
    Shape shape;
    int64_t count = 1;
    for (const json& d : ref["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > limits.max_dim) {
        throw InputError(at, "bad dimension " + d.dump());
      }
      shape.push_back(d.get<int64_t>());
      count *= shape.back();
      if (shape.size() > 4 || count > limits.max_elements_per_tensor) {
        throw InputError(at, "shape too large");
      }
    }
    if (static_cast<size_t>(count) != data->size()) {
      throw InputError(at, "shape " + ShapeToString(shape) + " does not hold the " +
                               std::to_string(data->size()) + " values of the initializer");
    }
    ref = TensorToJson(Tensor(shape, *data));
  }
}

}  // namespace

std::vector<NodeRecord> ReadNodeRecords(const std::map<std::string, std::string>& metadata,
                                        const std::string& source, const Limits& limits) {
  std::vector<NodeRecord> out;
  const std::string prefix = kOnnxNodeRecordPrefix;
  for (auto it = metadata.lower_bound(prefix);
       it != metadata.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const std::string where = source + ": metadata '" + it->first + "'";
    NodeRecord r;
    r.key = it->first;
    json j = ParseJson(it->second, where, limits);
    if (!j.is_object() || !j.contains("node") || !j["node"].is_object() ||
        !j.contains("onnx_nodes") || !j["onnx_nodes"].is_array() || j["onnx_nodes"].empty()) {
      throw InputError(where, "expected {\"node\": {...}, \"onnx_nodes\": [names]}");
    }
    for (const json& name : j["onnx_nodes"]) {
      if (!name.is_string()) throw InputError(where, "onnx_nodes must be names");
      r.onnx_nodes.push_back(name.get<std::string>());
    }
    r.node = std::move(j["node"]);
    out.push_back(std::move(r));
  }
  return out;
}

Node NodeFromRecord(const NodeRecord& r,
                    const std::function<const std::vector<float>*(const std::string&)>& floats_of,
                    const std::function<Shape(const std::string&)>& shape_of,
                    const std::string& source, const Limits& limits) {
  const std::string where = source + ": metadata '" + r.key + "'";
  json node = r.node;
  if (node.contains("params"))
    ResolveTensors(&node["params"], where + ": /params", floats_of, limits);
  if (node.contains("epilogue") && node["epilogue"].is_array()) {
    for (size_t i = 0; i < node["epilogue"].size(); ++i) {
      json& step = node["epilogue"][i];
      if (step.is_object() && step.contains("params")) {
        ResolveTensors(&step["params"], where + ": /epilogue/" + std::to_string(i) + "/params",
                       floats_of, limits);
      }
    }
  }
  // Read as a one-node graph: the graph reader checks every key, attribute and shape.
  json inputs = json::array();
  if (!node.contains("inputs") || !node["inputs"].is_array() || !node.contains("outputs")) {
    throw InputError(where, "the node needs inputs and outputs");
  }
  std::set<std::string> seen;
  for (const json& in : node["inputs"]) {
    if (!in.is_string()) throw InputError(where, "inputs must be names");
    const std::string name = in.get<std::string>();
    if (seen.insert(name).second) inputs.push_back({{"name", name}, {"shape", shape_of(name)}});
  }
  json graph = {{"format", "fusefuzz-graph"},
                {"version", kGraphFormatVersion},
                {"inputs", std::move(inputs)},
                {"nodes", json::array({node})},
                {"outputs", node["outputs"]}};
  Graph g = ReadGraph(graph, where, limits);
  return std::move(g.nodes.at(0));
}

std::string ReexportDifference(const Graph& g, std::string_view model_bytes,
                               const std::string& source) {
  onnx::ModelProto original, again;
  ParseProto(model_bytes, &original, source, "ONNX ModelProto");
  const std::string bytes = ExportOnnx(g).bytes;
  ParseProto(bytes, &again, source + " (re-exported)", "ONNX ModelProto");
  const onnx::GraphProto& a = original.graph();
  const onnx::GraphProto& b = again.graph();
  auto compare = [](const auto& xs, const auto& ys, const char* what) -> std::string {
    for (int i = 0; i < std::max(xs.size(), ys.size()); ++i) {
      if (i >= xs.size() || i >= ys.size()) {
        return std::string(what) + " count: " + std::to_string(xs.size()) + " in the model, " +
               std::to_string(ys.size()) + " re-exported";
      }
      if (xs.Get(i).SerializeAsString() != ys.Get(i).SerializeAsString()) {
        return std::string(what) + " " + std::to_string(i) + " ('" + xs.Get(i).name() + "')";
      }
    }
    return "";
  };
  for (std::string d : {compare(a.node(), b.node(), "node"),
                        compare(a.initializer(), b.initializer(), "initializer"),
                        compare(a.input(), b.input(), "graph input"),
                        compare(a.output(), b.output(), "graph output")}) {
    if (!d.empty()) return d;
  }
  return "";
}

}  // namespace fusefuzz
