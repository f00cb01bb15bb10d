// The recording's formatting: each wrapped call (xnn_wrappers.cc) as one C++ statement with its
// arguments as exact literals and static data as byte arrays (xnn_recorder.h says why).
#include "targets/xnnpack/xnn_recorder.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "targets/xnnpack/xnn_record_format.h"

namespace fusefuzz::xnnpack {
namespace {
Recording* g_recording = nullptr;  // the wrapped C calls have no other way to reach it
}  // namespace

namespace record {

std::string U32(uint32_t v) {
  return v == XNN_INVALID_VALUE_ID ? "XNN_INVALID_VALUE_ID" : std::to_string(v) + "u";
}
std::string Size(size_t v) { return std::to_string(v); }
std::string I32(int32_t v) { return std::to_string(v); }
std::string Float(float v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));  // exact
  return buf;
}
std::string Type(xnn_datatype t) {
  return "static_cast<xnn_datatype>(" + std::to_string(int(t)) + ")";
}

size_t ElementBytes(xnn_datatype t) {
  switch (t) {
    case xnn_datatype_fp16:
      return 2;
    case xnn_datatype_qint8:
    case xnn_datatype_quint8:
    case xnn_datatype_qcint8:
      return 1;
    default:
      return 4;
  }
}

// A static array of the recording, by name.
std::string Array(Recording* r, const char* type, const std::string& items) {
  const std::string name = "a" + std::to_string(r->next_array++);
  r->statics << "alignas(16) static const " << type << " " << name << "[] = {" << items << "};\n";
  return name;
}
std::string SizeArray(Recording* r, const size_t* d, size_t n) {
  if (n == 0) return "nullptr";
  std::string items;
  for (size_t i = 0; i < n; ++i) items += (i ? ", " : "") + std::to_string(d[i]);
  return Array(r, "size_t", items);
}
std::string FloatArray(Recording* r, const float* d, size_t n) {
  std::string items;
  for (size_t i = 0; i < n; ++i) items += (i ? ", " : "") + Float(d[i]);
  return Array(r, "float", items);
}
std::string Bytes(Recording* r, const void* data, size_t n) {
  if (!data) return "nullptr";
  std::string items;
  const auto* b = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    items += (i ? (i % 24 ? "," : ",\n    ") : "") + std::to_string(b[i]);
  }
  return Array(r, "uint8_t", items);
}
size_t Count(const size_t* dims, size_t n) {
  size_t c = 1;
  for (size_t i = 0; i < n; ++i) c *= dims[i];
  return c;
}
size_t RankOf(Recording* r, uint32_t id) {
  auto it = r->values.find(id);
  return it == r->values.end() ? 0 : it->second.dims.size();
}
void Call(Recording* r, const std::string& name, const std::string& args) {
  r->calls << "  Check(" << name << "(sg, " << args << "), \"" << name << "\");\n";
}

void Value(Recording* r, const std::string& name, const std::string& args, xnn_datatype t,
           size_t num_dims, const size_t* dims, const void* data, uint32_t flags, uint32_t id) {
  r->calls << "  Check(" << name << "(sg, " << args << ", &id), \"" << name << "\");\n"
           << "  Expect(id == " << id << "u);\n";
  RecordedValue v;
  v.id = id;
  v.datatype = int(t);
  v.dims.assign(dims, dims + num_dims);
  v.flags = flags;
  v.is_static = data != nullptr;
  r->values[id] = v;
}

}  // namespace record

Recording::Recording() { g_recording = this; }
Recording::~Recording() { g_recording = nullptr; }
Recording* ActiveRecording() { return g_recording; }

}  // namespace fusefuzz::xnnpack
