#include "onnx/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <vector>

#include "ir/error.h"
#include "onnx/onnx_fields.h"
#include "onnx/proto_writer.h"

namespace fusefuzz {

std::string EncodeTensorProto(const std::string& name, const Tensor& t) {
  pb::Writer w;
  for (int64_t d : t.shape) w.Int64(onnxf::kTensorDims, d);
  w.Int64(onnxf::kTensorDataType, onnxf::kFloat);
  w.Bytes(onnxf::kTensorName, name);
  std::string raw(t.data.size() * 4, '\0');
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &t.data[i], 4);
    for (int b = 0; b < 4; ++b) raw[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  w.Bytes(onnxf::kTensorRawData, raw);
  return w.data();
}

namespace {

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t LittleEndian32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(s[at + b])) << (8 * b);
  return v;
}

}  // namespace

NamedTensor DecodeTensorProto(std::string_view bytes, const std::string& source,
                              const Limits& limits) {
  auto fail = [&](const std::string& what) { throw InputError(source, what); };
  NamedTensor out;
  int64_t data_type = 0;
  bool have_raw = false;
  std::string_view raw;
  std::vector<uint32_t> float_bits;  // float_data, packed or not
  pb::Reader r(bytes);
  while (r.Next()) {
    switch (r.field()) {
      case onnxf::kTensorDims: {
        auto add = [&](uint64_t d) {
          if (static_cast<int64_t>(out.tensor.shape.size()) >= limits.max_rank) {
            fail("TensorProto has more than " + std::to_string(limits.max_rank) + " dims");
          }
          if (d < 1 || d > static_cast<uint64_t>(limits.max_dim)) {
            fail("TensorProto dim " + std::to_string(static_cast<int64_t>(d)) + " outside [1, " +
                 std::to_string(limits.max_dim) + "]");
          }
          out.tensor.shape.push_back(static_cast<int64_t>(d));
        };
        if (r.wire_type() == pb::WireType::kVarint) {
          add(r.varint());
        } else if (r.wire_type() == pb::WireType::kLengthDelimited) {
          // A packed field is a bare sequence of varints: read them as fields of a fake tag.
          std::string_view p = r.bytes();
          size_t pos = 0;
          while (pos < p.size()) {
            uint64_t v = 0;
            int shift = 0;
            for (;;) {
              if (pos >= p.size() || shift >= 70) fail("malformed packed dims");
              auto b = static_cast<uint8_t>(p[pos++]);
              v |= static_cast<uint64_t>(b & 0x7f) << shift;
              shift += 7;
              if (!(b & 0x80)) break;
            }
            add(v);
          }
        } else {
          fail("TensorProto dims have a wrong wire type");
        }
        break;
      }
      case onnxf::kTensorDataType:
        data_type = static_cast<int64_t>(r.varint());
        break;
      case onnxf::kTensorName:
        if (r.bytes().size() > 256) fail("TensorProto name longer than 256 bytes");
        out.name = std::string(r.bytes());
        break;
      case onnxf::kTensorRawData:
        have_raw = true;
        raw = r.bytes();
        break;
      case onnxf::kTensorFloatData:
        if (r.wire_type() == pb::WireType::kFixed32) {
          if (float_bits.size() >= static_cast<size_t>(limits.max_elements_per_tensor)) {
            fail("TensorProto float_data longer than the element limit");
          }
          float_bits.push_back(r.fixed32());
        } else if (r.wire_type() == pb::WireType::kLengthDelimited) {
          std::string_view p = r.bytes();
          if (p.size() % 4 != 0) fail("TensorProto float_data is not a multiple of 4 bytes");
          if (float_bits.size() + p.size() / 4 >
              static_cast<size_t>(limits.max_elements_per_tensor)) {
            fail("TensorProto float_data longer than the element limit");
          }
          for (size_t i = 0; i < p.size(); i += 4) float_bits.push_back(LittleEndian32(p, i));
        } else {
          fail("TensorProto float_data has a wrong wire type");
        }
        break;
      case onnxf::kTensorDataLocation:
        if (r.varint() != 0) fail("TensorProto with external data is not supported");
        break;
      default:
        break;  // doc_string, segment and other fields do not change a float tensor
    }
  }
  if (!r.error().empty()) fail("malformed TensorProto: " + r.error());
  if (data_type != onnxf::kFloat) {
    fail("TensorProto data_type " + std::to_string(data_type) +
         " is not FLOAT (1); fusefuzz tensors are float32");
  }
  if (out.tensor.shape.empty()) fail("TensorProto has no dims (fusefuzz tensors have rank 1..4)");
  int64_t count = NumElements(out.tensor.shape);  // dims <= 2^24 each, rank <= 4: no overflow
  if (count > limits.max_elements_per_tensor) {
    fail("TensorProto declares " + std::to_string(count) + " elements, over the limit of " +
         std::to_string(limits.max_elements_per_tensor));
  }
  size_t n = static_cast<size_t>(count);
  if (have_raw) {
    if (raw.size() != 4 * n) {
      fail("TensorProto raw_data has " + std::to_string(raw.size()) + " bytes, the dims need " +
           std::to_string(4 * n));
    }
    out.tensor.data.resize(n);
    for (size_t i = 0; i < n; ++i) out.tensor.data[i] = FloatFromBits(LittleEndian32(raw, 4 * i));
  } else {
    if (float_bits.size() != n) {
      fail("TensorProto float_data has " + std::to_string(float_bits.size()) +
           " values, the dims need " + std::to_string(n));
    }
    out.tensor.data.resize(n);
    for (size_t i = 0; i < n; ++i) out.tensor.data[i] = FloatFromBits(float_bits[i]);
  }
  return out;
}

NamedTensor ReadTensorProtoFile(const std::string& path, const Limits& limits) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, std::string("cannot open file: ") + std::strerror(errno));
  f.seekg(0, std::ios::end);
  auto size = static_cast<int64_t>(f.tellg());
  constexpr int64_t kMax = (int64_t{1} << 30) + (int64_t{1} << 20);
  if (size < 0 || size > kMax) throw InputError(path, "file larger than 1 GiB");
  f.seekg(0);
  std::string bytes(static_cast<size_t>(size), '\0');
  f.read(bytes.data(), size);
  if (!f) throw InputError(path, "read error");
  return DecodeTensorProto(bytes, path, limits);
}

}  // namespace fusefuzz
