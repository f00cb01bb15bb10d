#include "onnx/proto_io.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdio>
#include <limits>

#include "ir/error.h"
#include "ir/read_file.h"

namespace fusefuzz {

std::string SerializeProto(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }  // the coded stream flushes into `out` when destroyed
  return out;
}

void ParseProto(std::string_view bytes, google::protobuf::MessageLite* m, const std::string& source,
                const std::string& what) {
  if (bytes.size() >= static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw InputError(source, what + " of 2 GiB or more (over protobuf's limit)");
  }
  if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw InputError(source, "malformed " + what + " (libprotobuf cannot parse it)");
  }
}

namespace {

using google::protobuf::FieldDescriptor;

// Whether a field of this type can be sent with this wire type (packed repeated scalars as
// length-delimited too).
bool WireTypeFits(const FieldDescriptor* f, int wire) {
  constexpr int kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5;
  if (wire == kLen &&
      (f->is_packable() || f->type() == FieldDescriptor::TYPE_STRING ||
       f->type() == FieldDescriptor::TYPE_BYTES || f->type() == FieldDescriptor::TYPE_MESSAGE)) {
    return true;
  }
  switch (f->type()) {
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_BOOL:
    case FieldDescriptor::TYPE_ENUM:
      return wire == kVarint;
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
    case FieldDescriptor::TYPE_DOUBLE:
      return wire == kFixed64;
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
    case FieldDescriptor::TYPE_FLOAT:
      return wire == kFixed32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_GROUP:
      return false;
  }
  return false;
}

}  // namespace

void CheckMessageStart(std::string_view bytes, const google::protobuf::Descriptor* message,
                       const std::string& source, const std::string& what) {
  if (bytes.empty()) return;  // an empty message: its reader says what is missing
  // The first tag, a varint of field number << 3 | wire type (at most 5 bytes for 32 bits).
  uint64_t tag = 0;
  size_t i = 0;
  for (; i < bytes.size() && i < 5; ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    tag |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) break;
  }
  const auto b0 = static_cast<unsigned char>(bytes[0]);
  char first[8];
  std::snprintf(first, sizeof first, "0x%02x", b0);
  auto refuse = [&](const std::string& why) {
    // A JSON graph or reproducer given where a model is read: `show`, `run`, `check` and
    // `compare` read those directly.
    const bool json = b0 == '{' || b0 == '[';
    throw InputError(source, "not " + what + ": the first byte (" + first + ") " + why +
                                 (json ? " (this looks like JSON: fusefuzz's graph and "
                                         "reproducer files need no import; `show`, `run`, "
                                         "`check` and `compare` read them as they are)"
                                       : " (is this the right file?)"));
  };
  if (i == bytes.size() || i == 5) refuse("does not start a protobuf field tag");
  const int wire = static_cast<int>(tag & 7);
  const auto number = static_cast<int>(tag >> 3);
  const FieldDescriptor* f = number > 0 ? message->FindFieldByNumber(number) : nullptr;
  if (!f) {
    refuse("starts field " + std::to_string(number) + ", which " + message->name() +
           " does not have");
  }
  if (!WireTypeFits(f, wire)) {
    refuse("starts field " + std::to_string(number) + " (" + f->name() + ") with wire type " +
           std::to_string(wire) + ", which that field cannot have");
  }
}

namespace {

// A varint at bytes[*at]: true and *at past it, false when it does not end within `bytes` yet.
bool ReadVarint(std::string_view bytes, size_t* at, uint64_t* v) {
  *v = 0;
  for (size_t i = *at, shift = 0; i < bytes.size() && shift < 64; ++i, shift += 7) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *at = i + 1;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ReadProtoFile(const std::string& path, int64_t max_bytes,
                          const google::protobuf::Descriptor* message, const std::string& what) {
  ReadFileOptions o;
  o.max_bytes = max_bytes;
  // The first piece decides: a file of zeros or text is refused after 1 MiB, not after a whole
  // read and parse. Then the top-level fields are walked as the pieces arrive (a tag, then its
  // value skipped): a tag no message can have (field 0, wire type 3, 4, 6 or 7) stops the read
  // there, so a valid prefix followed by 900 MB of zeros is refused on its first piece.
  size_t next = 0;  // offset of the next top-level tag
  o.check = [&](const std::string& bytes, size_t from) {
    if (from == 0) CheckMessageStart(bytes, message, path, what);
    while (next < bytes.size()) {
      size_t at = next;
      uint64_t tag = 0, n = 0;
      if (!ReadVarint(bytes, &at, &tag)) return;  // the tag goes on in the next piece
      const uint64_t wire = tag & 7;
      if ((tag >> 3) == 0 || wire == 3 || wire == 4 || wire > 5) {
        throw InputError(path, "malformed " + what + ": byte " + std::to_string(next) +
                                   " is no protobuf field tag (field " + std::to_string(tag >> 3) +
                                   ", wire type " + std::to_string(wire) + ")");
      }
      if (wire == 0) {
        if (!ReadVarint(bytes, &at, &n)) return;
      } else if (wire == 1 || wire == 5) {
        at += wire == 1 ? 8 : 4;
      } else {
        if (!ReadVarint(bytes, &at, &n)) return;
        if (n > static_cast<uint64_t>(max_bytes)) {
          throw InputError(path, "malformed " + what + ": the field at byte " +
                                     std::to_string(next) + " claims " + std::to_string(n) +
                                     " bytes, more than the file may hold");
        }
        at += static_cast<size_t>(n);
      }
      next = at;
    }
  };
  return ReadRegularFile(path, o);
}

}  // namespace fusefuzz
