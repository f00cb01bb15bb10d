#include "targets/hello_declarations.h"

#include <algorithm>

namespace fusefuzz {

namespace {

using nlohmann::json;

std::string Names(const json& list, const std::string& path, std::vector<std::string>* out) {
  if (!list.is_array()) return "hello: " + path + " must be an array of names";
  if (list.size() > 10000) return "hello: " + path + " lists more than 10000 names";
  for (size_t i = 0; i < list.size(); ++i) {
    const json& n = list[i];
    if (!n.is_string() || n.get_ref<const std::string&>().empty() ||
        n.get_ref<const std::string&>().size() > 200) {
      return "hello: " + path + "/" + std::to_string(i) +
             ": must be a non-empty string of at most 200 bytes";
    }
    out->push_back(n.get<std::string>());
  }
  return "";
}

std::string Flag(const json& c, const char* key, bool* out) {
  auto it = c.find(key);
  if (it == c.end()) return "";
  if (!it->is_boolean())
    return std::string("hello: /constraints/") + key + " must be true or false";
  *out = it->get<bool>();
  return "";
}

}  // namespace

std::string ParseHelloDeclarations(const json& hello, TargetCaps* caps) {
  caps->fusions.clear();
  caps->constraints = {};
  if (auto f = hello.find("fusions"); f != hello.end()) {
    if (std::string e = Names(*f, "/fusions", &caps->fusions); !e.empty()) return e;
  }
  caps->unreachable_fusions.clear();
  if (auto u = hello.find("unreachable_fusions"); u != hello.end()) {
    if (!u->is_object() || u->size() > 10000) {
      return "hello: \"unreachable_fusions\" must be an object {fusion: why} of at most 10000 "
             "entries";
    }
    for (const auto& [name, why] : u->items()) {
      if (name.empty() || name.size() > 200 || !why.is_string() ||
          why.get_ref<const std::string&>().size() > 500) {
        return "hello: /unreachable_fusions/" + name +
               ": a name of 1 to 200 bytes and a reason of at most 500";
      }
      caps->unreachable_fusions[name] = why.get<std::string>();
    }
  }
  auto c = hello.find("constraints");
  if (c == hello.end()) return "";
  if (!c->is_object()) return "hello: \"constraints\" must be an object";
  TargetConstraints& k = caps->constraints;
  if (auto t = c->find("activation_types"); t != c->end()) {
    if (std::string e = Names(*t, "/constraints/activation_types", &k.activation_types);
        !e.empty()) {
      return e;
    }
    for (size_t i = 0; i < k.activation_types.size(); ++i) {
      if (k.activation_types[i] != "int8" && k.activation_types[i] != "uint8") {
        return "hello: /constraints/activation_types/" + std::to_string(i) +
               ": must be \"int8\" or \"uint8\", got \"" + k.activation_types[i] + "\"";
      }
    }
  }
  // Unknown keys are ignored, as everywhere in the hello: later revisions may add some.
  for (const auto& [key, field] : {std::pair{"per_axis_activations", &k.per_axis_activations},
                                   {"shared_quantized_values", &k.shared_quantized_values},
                                   {"quantized_graph_outputs", &k.quantized_graph_outputs},
                                   {"fan_out_before_activation", &k.fan_out_before_activation},
                                   {"requantize", &k.requantize},
                                   {"weight_zero_points", &k.weight_zero_points},
                                   {"integer_pads", &k.integer_pads},
                                   {"negative_scales", &k.negative_scales}}) {
    if (std::string e = Flag(*c, key, field); !e.empty()) return e;
  }
  return "";
}

json ConstraintsToJson(const TargetConstraints& c) {
  json j = json::object();
  const TargetConstraints none;
  if (!c.activation_types.empty()) j["activation_types"] = c.activation_types;
  if (c.per_axis_activations != none.per_axis_activations)
    j["per_axis_activations"] = c.per_axis_activations;
  if (c.shared_quantized_values != none.shared_quantized_values)
    j["shared_quantized_values"] = c.shared_quantized_values;
  if (c.quantized_graph_outputs != none.quantized_graph_outputs)
    j["quantized_graph_outputs"] = c.quantized_graph_outputs;
  if (c.fan_out_before_activation != none.fan_out_before_activation)
    j["fan_out_before_activation"] = c.fan_out_before_activation;
  if (c.negative_scales != none.negative_scales) j["negative_scales"] = c.negative_scales;
  if (c.requantize != none.requantize) j["requantize"] = c.requantize;
  if (c.weight_zero_points != none.weight_zero_points)
    j["weight_zero_points"] = c.weight_zero_points;
  if (c.integer_pads != none.integer_pads) j["integer_pads"] = c.integer_pads;
  return j;
}

}  // namespace fusefuzz
