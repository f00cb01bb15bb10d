// Graph JSON: a node's "quant" object and the graph's "options" (docs/graph-format.md). Value
// checks (scale > 0 and finite, zero point in range, lengths) are the verifier's, whose messages
// the reader maps back to the JSON pointer of the field (QuantPointer).
#include <cmath>
#include <limits>

#include "ir/json_internal.h"

namespace fusefuzz::json_detail {

using nlohmann::json;

namespace {

void CheckObjectKeys(const json& j, const ReadCtx& c, const std::string& p,
                     std::initializer_list<std::string_view> allowed, const std::string& what) {
  for (const auto& [key, v] : j.items()) {
    bool ok = false;
    for (auto a : allowed) ok |= a == key;
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Fail(c, p + "/" + Escape(key), "unknown key in " + what + " (expected " + list + ")");
    }
  }
}

const json& Member(const json& j, const ReadCtx& c, const std::string& p, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) Fail(c, p, std::string("missing required key \"") + key + "\"");
  return *it;
}

constexpr size_t kMaxChannels = size_t{1} << 16;

QuantParams ReadParams(const json& j, const ReadCtx& c, const std::string& p) {
  if (!j.is_object()) Fail(c, p, "must be an object {type, scale, zero_point[, axis]}");
  CheckObjectKeys(j, c, p, {"type", "scale", "zero_point", "axis"}, "quantization parameters");
  QuantParams q;
  const json& type = Member(j, c, p, "type");
  if (!type.is_string()) Fail(c, p + "/type", "must be a string, got " + TypeName(type));
  auto t = QuantTypeFromName(type.get_ref<const std::string&>());
  if (!t) {
    Fail(c, p + "/type",
         "unsupported quantization type " + Quote(type.get_ref<const std::string&>()) +
             " (fusefuzz models uint8, int8 and int32)");
  }
  q.type = *t;
  const json& scale = Member(j, c, p, "scale");
  if (!scale.is_array() || scale.empty()) {
    Fail(c, p + "/scale", "must be a non-empty array of numbers (one per tensor or per channel)");
  }
  if (scale.size() > kMaxChannels) Fail(c, p + "/scale", "more than 65536 entries");
  q.scale.clear();
  for (size_t i = 0; i < scale.size(); ++i) {
    const std::string pi = p + "/scale/" + std::to_string(i);
    float v = 0;
    if (!DoubleToFloat(ReadDouble(scale[i], c, pi), &v)) Fail(c, pi, "outside the float32 range");
    q.scale.push_back(static_cast<double>(v));  // ONNX scales are float32
  }
  const json& zp = Member(j, c, p, "zero_point");
  if (!zp.is_array()) Fail(c, p + "/zero_point", "must be an array of integers");
  if (zp.size() > kMaxChannels) Fail(c, p + "/zero_point", "more than 65536 entries");
  q.zero_point.clear();
  for (size_t i = 0; i < zp.size(); ++i) {
    const std::string pi = p + "/zero_point/" + std::to_string(i);
    const json& z = zp[i];
    if (!z.is_number_integer()) {
      Fail(c, pi,
           "a zero point must be an integer, got " + (z.is_number() ? z.dump() : TypeName(z)));
    }
    if (z.is_number_unsigned() && z.get<uint64_t>() > uint64_t{INT64_MAX}) {
      Fail(c, pi, "integer out of range");
    }
    q.zero_point.push_back(z.get<int64_t>());
  }
  if (const auto it = j.find("axis"); it != j.end()) {
    if (!it->is_number_integer()) Fail(c, p + "/axis", "must be an integer, got " + TypeName(*it));
    if (it->is_number_unsigned() && it->get<uint64_t>() > 16) {
      Fail(c, p + "/axis", "axis " + it->dump() + " is larger than any rank");
    }
    const int64_t a = it->get<int64_t>();
    if (a < 0) {
      Fail(c, p + "/axis",
           "must be >= 0 (a dimension of the tensor; omit it for per-tensor parameters)");
    }
    q.axis = a;
  }
  return q;
}

}  // namespace

QuantMap ReadQuantMap(const json& j, Op op, const ReadCtx& c, const std::string& p) {
  if (!j.is_object()) Fail(c, p, "must be an object keyed by role, got " + TypeName(j));
  QuantMap out;
  for (const auto& [role, v] : j.items()) {
    if (!FindQuantRole(op, role)) {
      std::string valid;
      for (const auto& r : QuantRolesOf(op)) valid += (valid.empty() ? "" : ", ") + r.role;
      Fail(c, p + "/" + Escape(role),
           "unknown quantization role " + Quote(role) + " for " + std::string(OpName(op)) +
               " (valid: " + (valid.empty() ? "none" : valid) + ")");
    }
    out.emplace(role, ReadParams(v, c, p + "/" + Escape(role)));
  }
  return out;
}

GraphOptions ReadGraphOptions(const json& j, const ReadCtx& c, const std::string& p) {
  if (!j.is_object()) Fail(c, p, "must be an object, got " + TypeName(j));
  CheckObjectKeys(j, c, p, {"allow_negative_scale"}, "graph options");
  GraphOptions o;
  if (const auto it = j.find("allow_negative_scale"); it != j.end()) {
    if (!it->is_boolean()) {
      Fail(c, p + "/allow_negative_scale", "must be true or false, got " + TypeName(*it));
    }
    o.allow_negative_scale = it->get<bool>();
  }
  return o;
}

OJson QuantMapToJson(const QuantMap& quant) {
  OJson j = OJson::object();
  for (const auto& [role, q] : quant) {
    OJson o = OJson::object();
    o["type"] = std::string(QuantTypeName(q.type));
    OJson s = OJson::array();
    for (double v : q.scale) {
      // Scales are float32 values; one built in code that is not is written exactly.
      s.push_back(static_cast<double>(static_cast<float>(v)) == v
                      ? FloatToJson(static_cast<float>(v))
                      : DoubleToJson(v));
    }
    o["scale"] = std::move(s);
    o["zero_point"] = q.zero_point;
    if (q.axis != -1) o["axis"] = q.axis;
    j[role] = std::move(o);
  }
  return j;
}

OJson GraphOptionsToJson(const GraphOptions& o) {
  OJson j = OJson::object();
  if (o.allow_negative_scale) j["allow_negative_scale"] = true;
  return j;
}

std::string QuantPointer(std::string_view rest) {
  // rest: " quant 'y'", optionally followed by " scale[1]", " zero_point[0]" or " axis".
  // Past the op name the verifier puts after the node's ("node 'q' (QuantizeLinear) ...").
  if (rest.starts_with(" (")) {
    const size_t close = rest.find(')');
    if (close == std::string_view::npos) return "";
    rest.remove_prefix(close + 1);
  }
  constexpr std::string_view kHead = " quant '";
  if (!rest.starts_with(kHead)) return "";
  rest.remove_prefix(kHead.size());
  const size_t end = rest.find('\'');
  if (end == std::string_view::npos) return "";
  std::string p = "/quant/" + Escape(rest.substr(0, end));
  rest.remove_prefix(end + 1);
  for (std::string_view field : {" scale[", " zero_point["}) {
    if (rest.starts_with(field)) {
      rest.remove_prefix(field.size());
      const size_t close = rest.find(']');
      if (close == std::string_view::npos) return p;
      return p + "/" + std::string(field.substr(1, field.size() - 2)) + "/" +
             std::string(rest.substr(0, close));
    }
  }
  if (rest.starts_with(" axis")) return p + "/axis";
  if (rest.starts_with(" type")) return p + "/type";
  if (rest.starts_with(" scale")) return p + "/scale";
  return p;
}

}  // namespace fusefuzz::json_detail
