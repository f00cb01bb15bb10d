// A minimal protocol-buffers wire-format writer and reader: just what ONNX's ModelProto and
// TensorProto need (varints, fixed32, length-delimited fields). fusefuzz writes its ONNX files
// with it instead of linking libprotobuf into every library: the exec client (targets/) needs
// the exporter, and the fuzz targets built by ClusterFuzzLite link the exec client without
// having ONNX or protobuf installed. The bytes are deterministic: fields in field-number order
// of our choosing, no maps, no unknown fields. libonnx's checker validates them in the tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fusefuzz::pb {

// Appends fields to a message buffer. Nested messages are written as a finished inner buffer.
class Writer {
 public:
  void Varint(int field, uint64_t v);
  void Int64(int field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Float(int field, float v);
  void Bytes(int field, std::string_view bytes);
  void Message(int field, const Writer& inner) { Bytes(field, inner.data()); }
  // Appends already-encoded fields (a message is the concatenation of its fields).
  void Raw(std::string_view fields) { buf_.append(fields); }
  // Packed repeated int64 (one length-delimited field holding varints).
  void PackedInt64(int field, const int64_t* v, size_t n);
  const std::string& data() const { return buf_; }

 private:
  void Tag(int field, int wire_type);
  void RawVarint(uint64_t v);
  std::string buf_;
};

enum class WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads fields one by one from a buffer it does not own. Next() returns false at the end, and
// sets error() on malformed input (truncated field, bad wire type, varint longer than 10 bytes).
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Next();
  int field() const { return field_; }
  WireType wire_type() const { return wire_; }
  uint64_t varint() const { return varint_; }        // kVarint
  uint32_t fixed32() const { return fixed32_; }      // kFixed32
  std::string_view bytes() const { return bytes_; }  // kLengthDelimited
  const std::string& error() const { return error_; }
  size_t offset() const { return pos_; }

 private:
  bool ReadVarint(uint64_t* v);
  std::string_view data_;
  size_t pos_ = 0;
  int field_ = 0;
  WireType wire_ = WireType::kVarint;
  uint64_t varint_ = 0;
  uint32_t fixed32_ = 0;
  std::string_view bytes_;
  std::string error_;
};

}  // namespace fusefuzz::pb
