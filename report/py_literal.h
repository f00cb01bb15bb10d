// Python literals for the scripts fusefuzz writes (reproduce.py, report/torch_script.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace fusefuzz {

// A Python literal of any byte string: '...' for plain names, else a bytes literal of \xNN
// escapes decoded as UTF-8, so that no quote, backslash or newline of a name reaches the source.
std::string PyStr(const std::string& s);
// A float32 value exactly ("nan", "inf" and "-inf" are names the script defines).
std::string PyFloat32(float v);
// A double exactly.
std::string PyDouble(double v);
// Integers as a list "[1, 2]", or with open "(" and close ")" a tuple ("(1,)" for one).
std::string PyInts(const std::vector<int64_t>& v, const char* open = "[", const char* close = "]");
// `T([dims], [values])`: the script's tensor constructor.
std::string PyTensor(const Tensor& t);

}  // namespace fusefuzz
