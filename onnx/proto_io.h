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

// Throws InputError(source, "not <what>: ...") unless `bytes` is empty or starts with the tag
// of a field that `message` has, with a wire type that field can have: a file of zeros, a text
// file or another format is refused on its first byte.
void CheckMessageStart(std::string_view bytes, const google::protobuf::Descriptor* message,
                       const std::string& source, const std::string& what);

// A whole file of at most `max_bytes` (ir/read_file.h: only a regular file, never blocking),
// whose first bytes must be able to start `message` (CheckMessageStart, on the first 1 MiB
// piece, before the rest is read). InputError naming the path otherwise.
std::string ReadProtoFile(const std::string& path, int64_t max_bytes,
                          const google::protobuf::Descriptor* message, const std::string& what);

}  // namespace fusefuzz
