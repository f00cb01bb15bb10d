// What the wrapped xnn_* calls (xnn_wrappers.cc) write into the live Recording: arguments as
// exact C++ literals, static data as arrays of the recording (xnn_recorder.h says why).
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "targets/xnnpack/xnn_recorder.h"

namespace fusefuzz::xnnpack::record {

std::string U32(uint32_t v);  // XNN_INVALID_VALUE_ID by name
std::string Size(size_t v);
std::string I32(int32_t v);
std::string Float(float v);  // hexadecimal, exact; INFINITY, NAN by name
std::string Type(xnn_datatype t);
size_t ElementBytes(xnn_datatype t);
// Static arrays of the recording, by name ("nullptr" for no data).
std::string Array(Recording* r, const char* type, const std::string& items);
std::string SizeArray(Recording* r, const size_t* d, size_t n);
std::string FloatArray(Recording* r, const float* d, size_t n);
std::string Bytes(Recording* r, const void* data, size_t n);
size_t Count(const size_t* dims, size_t n);
size_t RankOf(Recording* r, uint32_t id);  // of a value defined before
// One call statement; a value definition, whose id XNNPACK gives is checked in the reproducer
// (the same calls in the same order give the same ids).
void Call(Recording* r, const std::string& name, const std::string& args);
void Value(Recording* r, const std::string& name, const std::string& args, xnn_datatype t,
           size_t num_dims, const size_t* dims, const void* data, uint32_t flags, uint32_t id);

}  // namespace fusefuzz::xnnpack::record
