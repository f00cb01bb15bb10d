// TensorProto files through libonnx's generated class; libprotobuf does the wire format.
#include "onnx/tensor_proto.h"

#include <bit>
#include <cstring>

#include "ir/error.h"
#include "onnx/proto_io.h"

namespace fusefuzz {

static_assert(std::endian::native == std::endian::little,
              "raw_data is little-endian float32, copied as is");

std::string EncodeTensorProto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.set_name(name);
  p.set_raw_data(t.data.data(), t.data.size() * sizeof(float));
  return SerializeProto(p);
}

NamedTensor DecodeTensorProto(std::string_view bytes, const std::string& source,
                              const Limits& limits) {
  auto fail = [&](const std::string& what) { throw InputError(source, what); };
  onnx::TensorProto p;
  ParseProto(bytes, &p, source, "TensorProto");
  NamedTensor out;
  if (p.name().size() > 256) fail("TensorProto name longer than 256 bytes");
  out.name = p.name();
  if (p.data_type() != onnx::TensorProto::FLOAT) {
    fail("TensorProto data_type " + std::to_string(p.data_type()) +
         " is not FLOAT (1); fusefuzz tensors are float32");
  }
  if (p.data_location() != onnx::TensorProto::DEFAULT) {
    fail("TensorProto with external data is not supported");
  }
  if (p.dims_size() == 0) fail("TensorProto has no dims (fusefuzz tensors have rank 1..4)");
  if (p.dims_size() > limits.max_rank) {
    fail("TensorProto has more than " + std::to_string(limits.max_rank) + " dims");
  }
  for (int64_t d : p.dims()) {
    if (d < 1 || d > limits.max_dim) {
      fail("TensorProto dim " + std::to_string(d) + " outside [1, " +
           std::to_string(limits.max_dim) + "]");
    }
    out.tensor.shape.push_back(d);
  }
  int64_t count = NumElements(out.tensor.shape);  // dims <= 2^24 each, rank <= 4: no overflow
  if (count > limits.max_elements_per_tensor) {
    fail("TensorProto declares " + std::to_string(count) + " elements, over the limit of " +
         std::to_string(limits.max_elements_per_tensor));
  }
  auto n = static_cast<size_t>(count);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != 4 * n) {
      fail("TensorProto raw_data has " + std::to_string(p.raw_data().size()) +
           " bytes, the dims need " + std::to_string(4 * n));
    }
    out.tensor.data.resize(n);
    if (n) std::memcpy(out.tensor.data.data(), p.raw_data().data(), 4 * n);
  } else {
    if (static_cast<size_t>(p.float_data_size()) != n) {
      fail("TensorProto float_data has " + std::to_string(p.float_data_size()) +
           " values, the dims need " + std::to_string(n));
    }
    out.tensor.data.assign(p.float_data().begin(), p.float_data().end());
  }
  return out;
}

NamedTensor ReadTensorProtoFile(const std::string& path, const Limits& limits) {
  constexpr int64_t kMax = (int64_t{1} << 30) + (int64_t{1} << 20);
  return DecodeTensorProto(
      ReadProtoFile(path, kMax, onnx::TensorProto::descriptor(), "a TensorProto"), path, limits);
}

}  // namespace fusefuzz
