// Internal helpers shared by the graph and tensor JSON readers/writers (ir/json_io.cc,
// ir/json_tensor.cc). Not part of the public IR contract.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/limits.h"
#include "ir/tensor.h"

namespace fusefuzz::json_detail {

using OJson = nlohmann::ordered_json;

// Reading context: where errors point, the limits, and the running byte budget of one file.
struct ReadCtx {
  const std::string& source;
  const Limits& limits;
  int64_t bytes = 0;
};

[[noreturn]] void Fail(const ReadCtx& c, const std::string& pointer, const std::string& what);
std::string Escape(std::string_view key);  // RFC 6901 token escaping (~0, ~1)
std::string TypeName(const nlohmann::json& j);
// A short, printable excerpt of a string value for messages.
std::string Quote(std::string_view s);

// Shape: array of 1..max_rank integers in [1, max_dim], element count within the limit.
Shape ReadShape(const nlohmann::json& j, const ReadCtx& c, const std::string& pointer);
Tensor ReadTensorAt(const nlohmann::json& j, ReadCtx& c, const std::string& pointer);
// A JSON number (or "nan", "inf", "-inf") as float32; out-of-range numbers are errors.
float ReadFloat(const nlohmann::json& j, const ReadCtx& c, const std::string& pointer);
// Same as double (attributes).
double ReadDouble(const nlohmann::json& j, const ReadCtx& c, const std::string& pointer);
// `d` rounded to nearest float32 (NaN and infinities kept); false when a finite `d` rounds to
// infinity. Every reader of a float32 value takes this one rule, so whatever FloatToJson writes
// (FLT_MAX's shortest form, 3.4028235e+38, is a little above FLT_MAX) reads back.
bool DoubleToFloat(double d, float* out);

// Writers: numbers that read back bit-exactly; non-finite values as strings.
OJson FloatToJson(float f);
OJson DoubleToJson(double d);
OJson TensorToOJson(const Tensor& t, bool plain);
// Indented text with short containers and scalar arrays on one line; indent < 0: one line.
std::string Pretty(const OJson& j, int indent);

std::string Base64Encode(const std::vector<float>& data);

// ir/json_file.cc. The text of a file for ReadJsonFile (see there for what is refused).
std::string ReadJsonText(const std::string& path, const Limits& limits);
// Refuses duplicate keys and more than limits.max_json_values values in `text`, naming `source`
// and the JSON pointer (InputError), in one pass without building the document. false: a syntax
// error, which the parse after it reports.
bool CheckDocument(const std::string& text, const std::string& source, const Limits& limits);

// ir/json_quant.cc: a node's "quant" object (roles checked against `op`) and the graph's
// "options"; their writers (options: only non-default members).
QuantMap ReadQuantMap(const nlohmann::json& j, Op op, const ReadCtx& c, const std::string& pointer);
GraphOptions ReadGraphOptions(const nlohmann::json& j, const ReadCtx& c,
                              const std::string& pointer);
OJson QuantMapToJson(const QuantMap& quant);
OJson GraphOptionsToJson(const GraphOptions& o);
// The JSON pointer suffix ("/quant/y/scale/1") of a verifier location's rest after the node
// ("quant 'y' scale[1]"), or "" when it is not about a quant field.
std::string QuantPointer(std::string_view rest);

}  // namespace fusefuzz::json_detail
