// libFuzzer target: bytes -> the TensorProto reader of `compare --inputs-pb DIR` and
// `--outputs DIR` (CheckMessageStart, then DecodeTensorProto with tight Limits). InputError is
// the expected answer to bad input; anything else is a bug, and so is a decoded tensor beyond the
// element limit or one that does not come back bit for bit through encode -> decode.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "ir/error.h"
#include "onnx/proto_io.h"
#include "onnx/tensor_proto.h"

namespace fusefuzz::fuzz {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  FailInvariant("tensor_proto_fuzzer", what, detail);
}

// A TensorProto file: decoded within the limits, or refused; decoded, it encodes and decodes
// to the same name, shape and bits.
void TensorProtoInput(const std::string& bytes, const Limits& limits) {
  NamedTensor t;
  try {
    CheckMessageStart(bytes, onnx::TensorProto::descriptor(), "fuzz", "a TensorProto");
  } catch (const InputError&) {
    // Refused by the file reader before parsing: the decoder must not crash on it either.
  }
  try {
    t = DecodeTensorProto(bytes, "fuzz", limits);
  } catch (const InputError&) {
    return;
  }
  if (t.tensor.size() > limits.max_elements_per_tensor) {
    Fail("a decoded TensorProto exceeds the element limit", std::to_string(t.tensor.size()));
  }
  NamedTensor back;
  try {
    back = DecodeTensorProto(EncodeTensorProto(t.name, t.tensor), "re-encoded", limits);
  } catch (const InputError& e) {
    Fail("a decoded TensorProto, encoded, does not decode", e.what());
  }
  if (back.name != t.name || !back.tensor.BitwiseEquals(t.tensor)) {
    Fail("TensorProto decode -> encode -> decode is not identical", t.name);
  }
}

}  // namespace
}  // namespace fusefuzz::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fusefuzz::fuzz::TensorProtoInput(std::string(reinterpret_cast<const char*>(data), size),
                                   fusefuzz::fuzz::FuzzLimits());
  return 0;
}
