// Tensors in JSON (plain data arrays and base64), tensors files, JSON file I/O, and the
// pretty printer shared by every writer.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/json_internal.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace json_detail {

using nlohmann::json;

void Fail(const ReadCtx& c, const std::string& pointer, const std::string& what) {
  throw InputError(c.source + ": " + (pointer.empty() ? "/" : pointer), what);
}

std::string Escape(std::string_view key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') {
      out += "~0";
    } else if (ch == '/') {
      out += "~1";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string TypeName(const json& j) {
  if (j.is_number_integer()) return "integer";
  return j.type_name();
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s.substr(0, 40)) {
    out += (static_cast<unsigned char>(ch) < 0x20 || ch == '"' || ch == '\\') ? '?' : ch;
  }
  return out + (s.size() > 40 ? "...\"" : "\"");
}

namespace {

// The smallest double that rounds to float32 infinity: FLT_MAX plus half an ulp (a tie, which
// rounds to the even infinity).
constexpr double kFloatRoundLimit = 0x1.ffffffp127;

}  // namespace

// Converts without the undefined behaviour of casting an out-of-range double to float.
bool DoubleToFloat(double d, float* out) {
  if (std::isnan(d)) {
    *out = std::numeric_limits<float>::quiet_NaN();
    return true;
  }
  if (std::isinf(d)) {
    *out = d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    return true;
  }
  if (std::fabs(d) >= kFloatRoundLimit) return false;
  if (std::fabs(d) > FLT_MAX) {
    *out = d > 0 ? FLT_MAX : -FLT_MAX;
  } else {
    *out = static_cast<float>(d);
  }
  return true;
}

namespace {

bool SpecialFromString(const std::string& s, double* out) {
  if (s == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "inf") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-inf") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int B64Value(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+') return 62;
  if (ch == '/') return 63;
  return -1;
}

std::vector<float> Base64Decode(const std::string& s, int64_t count, const ReadCtx& c,
                                const std::string& pointer) {
  // Length is checked against the shape before anything is decoded.
  int64_t want = (count * 4 + 2) / 3 * 4;
  if (static_cast<int64_t>(s.size()) != want) {
    Fail(c, pointer,
         "base64 length " + std::to_string(s.size()) +
             " does not match the shape: " + std::to_string(count) + " float32 values need " +
             std::to_string(want) + " characters");
  }
  size_t pad = 0;
  while (pad < 2 && pad < s.size() && s[s.size() - 1 - pad] == '=') ++pad;
  if (pad != static_cast<size_t>(want - (count * 4 * 4 + 2) / 3)) {
    Fail(c, pointer, "invalid base64 padding");
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(count) * 4);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i + pad < s.size(); ++i) {
    int v = B64Value(s[i]);
    if (v < 0) {
      Fail(c, pointer, "invalid base64 character at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  std::vector<float> out(static_cast<size_t>(count));
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t u = uint32_t{bytes[4 * i]} | uint32_t{bytes[4 * i + 1]} << 8 |
                 uint32_t{bytes[4 * i + 2]} << 16 | uint32_t{bytes[4 * i + 3]} << 24;
    out[i] = std::bit_cast<float>(u);
  }
  return out;
}

}  // namespace

std::string Base64Encode(const std::vector<float>& data) {
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3 * 4);
  uint32_t acc = 0;
  int bits = 0;
  for (float f : data) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    for (int b = 0; b < 4; ++b) {
      acc = (acc << 8) | ((u >> (8 * b)) & 0xff);
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out += kB64[(acc >> bits) & 63];
      }
    }
  }
  if (bits > 0) out += kB64[(acc << (6 - bits)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

double ReadDouble(const json& j, const ReadCtx& c, const std::string& pointer) {
  double d = 0;
  if (j.is_string()) {
    if (!SpecialFromString(j.get_ref<const std::string&>(), &d)) {
      Fail(c, pointer,
           "must be a number or \"nan\", \"inf\", \"-inf\", got " +
               Quote(j.get_ref<const std::string&>()));
    }
    return d;
  }
  if (j.is_number_float()) {
    d = j.get<double>();
    if (!std::isfinite(d)) Fail(c, pointer, "number out of range");
    return d;
  }
  if (j.is_number_unsigned()) return static_cast<double>(j.get<uint64_t>());
  if (j.is_number_integer()) return static_cast<double>(j.get<int64_t>());
  Fail(c, pointer, "must be a number, got " + TypeName(j));
}

float ReadFloat(const json& j, const ReadCtx& c, const std::string& pointer) {
  float f = 0;
  if (!DoubleToFloat(ReadDouble(j, c, pointer), &f)) {
    Fail(c, pointer, "number out of float32 range");
  }
  return f;
}

Shape ReadShape(const json& j, const ReadCtx& c, const std::string& pointer) {
  if (!j.is_array()) Fail(c, pointer, "shape must be an array of integers, got " + TypeName(j));
  if (j.empty() || static_cast<int64_t>(j.size()) > c.limits.max_rank) {
    Fail(c, pointer,
         "rank must be 1.." + std::to_string(c.limits.max_rank) + ", got " +
             std::to_string(j.size()));
  }
  Shape s;
  int64_t n = 1;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& d = j[i];
    std::string p = pointer + "/" + std::to_string(i);
    if (!d.is_number_integer()) Fail(c, p, "dim must be an integer, got " + TypeName(d));
    // Non-negative JSON integers are stored unsigned by nlohmann; compare in that domain.
    bool in_range = d.is_number_unsigned()
                        ? (d.get<uint64_t>() >= 1 &&
                           d.get<uint64_t>() <= static_cast<uint64_t>(c.limits.max_dim))
                        : (d.get<int64_t>() >= 1 && d.get<int64_t>() <= c.limits.max_dim);
    if (!in_range) {
      Fail(c, p, "dim must be in [1, " + std::to_string(c.limits.max_dim) + "], got " + d.dump());
    }
    int64_t v = d.get<int64_t>();
    if (n > c.limits.max_elements_per_tensor / v) {
      Fail(c, pointer,
           "shape declares more than " + std::to_string(c.limits.max_elements_per_tensor) +
               " elements (limit per tensor)");
    }
    n *= v;
    s.push_back(v);
  }
  return s;
}

Tensor ReadTensorAt(const json& j, ReadCtx& c, const std::string& pointer) {
  if (!j.is_object()) {
    Fail(c, pointer,
         "a tensor must be an object {\"shape\", \"data\" or \"b64\"}, got " + TypeName(j));
  }
  for (const auto& [key, v] : j.items()) {
    if (key != "shape" && key != "data" && key != "b64") {
      Fail(c, pointer + "/" + Escape(key), "unknown tensor key (expected shape, data or b64)");
    }
  }
  auto shape_it = j.find("shape");
  if (shape_it == j.end()) Fail(c, pointer, "tensor has no \"shape\"");
  Tensor t;
  t.shape = ReadShape(*shape_it, c, pointer + "/shape");
  int64_t count = NumElements(t.shape);
  c.bytes += count * 4;
  if (c.bytes > c.limits.max_total_bytes) {
    Fail(c, pointer,
         "tensors exceed the limit of " + std::to_string(c.limits.max_total_bytes) +
             " bytes in total");
  }
  auto data_it = j.find("data");
  auto b64_it = j.find("b64");
  if ((data_it == j.end()) == (b64_it == j.end())) {
    Fail(c, pointer, "tensor needs exactly one of \"data\" or \"b64\"");
  }
  if (b64_it != j.end()) {
    if (!b64_it->is_string())
      Fail(c, pointer + "/b64", "must be a string, got " + TypeName(*b64_it));
    t.data = Base64Decode(b64_it->get_ref<const std::string&>(), count, c, pointer + "/b64");
    return t;
  }
  const json& d = *data_it;
  if (!d.is_array()) Fail(c, pointer + "/data", "must be an array, got " + TypeName(d));
  if (static_cast<int64_t>(d.size()) != count) {
    Fail(c, pointer + "/data",
         "has " + std::to_string(d.size()) + " values but shape " + ShapeToString(t.shape) +
             " needs " + std::to_string(count));
  }
  t.data.resize(static_cast<size_t>(count));
  for (size_t i = 0; i < d.size(); ++i) {
    t.data[i] = ReadFloat(d[i], c, pointer + "/data/" + std::to_string(i));
  }
  return t;
}

OJson FloatToJson(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  // The shortest decimal that reads back to the same float, stored as the double nearest to it
  // (which nlohmann prints in its shortest form), so 0.1f is written "0.1", not 0.100000001.
  char buf[32];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
    double d = std::strtod(buf, nullptr);
    float back = 0;
    if (DoubleToFloat(d, &back) && std::bit_cast<uint32_t>(back) == std::bit_cast<uint32_t>(f)) {
      return d;
    }
  }
  return static_cast<double>(f);
}

OJson DoubleToJson(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}

OJson TensorToOJson(const Tensor& t, bool plain) {
  OJson j = OJson::object();
  j["shape"] = t.shape;
  if (plain) {
    OJson data = OJson::array();
    for (float f : t.data) data.push_back(FloatToJson(f));
    j["data"] = std::move(data);
  } else {
    j["b64"] = Base64Encode(t.data);
  }
  return j;
}

namespace {

bool IsScalarArray(const OJson& j) {
  if (!j.is_array()) return false;
  for (const auto& e : j) {
    if (e.is_structured()) return false;
  }
  return true;
}

// Appends the one-line form of `j`; stops (false) as soon as `out` is longer than `limit`,
// when the caller only needs to know that it does not fit on the line.
bool Flat(const OJson& j, std::string& out, size_t limit = std::string::npos) {
  if (j.is_array()) {
    out += '[';
    for (size_t i = 0; i < j.size(); ++i) {
      if (i) out += ", ";
      if (!Flat(j[i], out, limit)) return false;
    }
    out += ']';
  } else if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += OJson(k).dump() + ": ";
      if (!Flat(v, out, limit)) return false;
    }
    out += '}';
  } else {
    out += j.dump();
  }
  return out.size() <= limit;
}

// A value on one line when it fits in 96 columns (or is a scalar or an array of scalars), else
// one member per line. Only the part of a subtree that can still fit is flattened at each level:
// flattening whole subtrees at every level made writing a graph quadratic in its depth.
void Emit(const OJson& j, int indent, int level, std::string& out) {
  const size_t column = static_cast<size_t>(indent * level);
  std::string flat;
  if (!j.is_structured() || IsScalarArray(j) || j.empty()) {
    Flat(j, flat);
    out += flat;
    return;
  }
  if (column <= 96 && Flat(j, flat, 96 - column)) {
    out += flat;
    return;
  }
  std::string pad(static_cast<size_t>(indent * (level + 1)), ' ');
  out += j.is_array() ? "[\n" : "{\n";
  size_t i = 0;
  for (const auto& [k, v] : j.items()) {
    out += pad;
    if (j.is_object()) out += OJson(k).dump() + ": ";
    Emit(v, indent, level + 1, out);
    out += ++i < j.size() ? ",\n" : "\n";
  }
  out += std::string(column, ' ') + (j.is_array() ? "]" : "}");
}

// nlohmann's parser is iterative, but deep documents still cost memory and recursive consumers
// (dump) would overflow the stack: refuse more than this many open brackets.
constexpr int kMaxDepth = 64;

void CheckDepth(const std::string& text, const std::string& source) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (in_string) {
      if (ch == '\\') {
        ++i;
      } else if (ch == '"') {
        in_string = false;
      }
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > kMaxDepth) {
        throw InputError(source, "JSON nested deeper than " + std::to_string(kMaxDepth) +
                                     " levels at byte " + std::to_string(i));
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

}  // namespace

std::string Pretty(const OJson& j, int indent) {
  if (indent < 0) return j.dump();
  std::string out;
  Emit(j, indent, 0, out);
  return out;
}

}  // namespace json_detail

using namespace json_detail;  // NOLINT: this file implements them
using nlohmann::json;

Tensor ReadTensor(const json& j, const std::string& source, const std::string& pointer,
                  const Limits& limits) {
  ReadCtx c{source, limits};
  return ReadTensorAt(j, c, pointer);
}

json TensorToJson(const Tensor& t, const WriteOptions& opts) {
  return json(TensorToOJson(t, opts.plain));
}

TensorMap ReadTensors(const json& j, const std::string& source, const Limits& limits) {
  ReadCtx c{source, limits};
  if (!j.is_object()) Fail(c, "", "a tensors file must be an object {name: tensor}");
  if (auto f = j.find("format"); f != j.end() && f->is_string()) {
    Fail(c, "/format",
         "this is a " + Quote(f->get_ref<const std::string&>()) +
             " file, not a tensors file {name: tensor}");
  }
  TensorMap out;
  for (const auto& [name, v] : j.items()) {
    out.emplace(name, ReadTensorAt(v, c, std::string("/").append(Escape(name))));
  }
  return out;
}

TensorMap ReadTensorsFile(const std::string& path, const Limits& limits) {
  return ReadTensors(ReadJsonFile(path, limits), path, limits);
}

std::string WriteTensors(const TensorMap& tensors, const WriteOptions& opts) {
  OJson j = OJson::object();
  for (const auto& [name, t] : tensors) j[name] = TensorToOJson(t, opts.plain);
  return Pretty(j, opts.indent) + "\n";
}

json ParseJson(const std::string& text, const std::string& source, const Limits& limits) {
  CheckDepth(text, source);
  try {
    CheckDocument(text, source, limits);
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(source,
                     "JSON syntax error at byte " + std::to_string(e.byte) + " (" + msg + ")");
  } catch (const json::exception& e) {
    // E.g. out_of_range.406 "number overflow parsing '1e999'".
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    throw InputError(source, "invalid JSON: " + msg);
  }
}

json ReadJsonFile(const std::string& path, const Limits& limits) {
  return ParseJson(ReadJsonText(path, limits), path, limits);
}

}  // namespace fusefuzz
