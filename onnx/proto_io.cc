#include "onnx/proto_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include "ir/error.h"

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

std::string ReadFileBytes(const std::string& path, int64_t max_bytes,
                          const std::string& limit_text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  auto size = static_cast<int64_t>(in.tellg());
  if (size < 0 || size > max_bytes) throw InputError(path, "file larger than " + limit_text);
  in.seekg(0);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (!in) throw InputError(path, "read error");
  return bytes;
}

}  // namespace fusefuzz
