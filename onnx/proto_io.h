// libprotobuf (de)serialisation of ONNX messages (libonnx's generated classes, <onnx/onnx_pb.h>)
// with fusefuzz's errors: a parse failure is an InputError naming the source.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace fusefuzz {

// The message's bytes with deterministic serialisation (fields in field-number order, as
// protobuf always writes them; deterministic also orders map entries, which ONNX does not use).
std::string SerializeProto(const google::protobuf::MessageLite& m);

// Parses `bytes` into *m. Throws InputError(source, "malformed <what> (libprotobuf cannot parse
// it)") on malformed bytes and on inputs of 2 GiB or more (protobuf's size limit).
void ParseProto(std::string_view bytes, google::protobuf::MessageLite* m, const std::string& source,
                const std::string& what);

// A whole file of at most `max_bytes`; InputError naming the path when it cannot be read or is
// larger (`limit_text` says how large, e.g. "1 GiB").
std::string ReadFileBytes(const std::string& path, int64_t max_bytes,
                          const std::string& limit_text);

}  // namespace fusefuzz
