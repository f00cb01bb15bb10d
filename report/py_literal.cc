// Python literals for generated scripts (report/torch_script.cc): every byte of a name and every
// number is written so that Python reads back exactly that value, and nothing else.
#include "report/py_literal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fusefuzz {

std::string PyStr(const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-' || c == ':' || c == '/' || c == ' ';
  });
  if (plain) return "'" + s + "'";
  std::string out = "b'";
  for (unsigned char c : s) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out + "'.decode('utf-8', 'replace')";
}

std::string PyFloat32(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string PyDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string PyInts(const std::vector<int64_t>& v, const char* open, const char* close) {
  std::string s = open;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() == 1 && std::string(open) == "(") s += ",";
  return s + close;
}

std::string PyTensor(const Tensor& t) {
  std::string s = "T(" + PyInts(t.shape) + ", [";
  for (size_t i = 0; i < t.data.size(); ++i) s += (i ? ", " : "") + PyFloat32(t.data[i]);
  return s + "])";
}

}  // namespace fusefuzz
