// The statement writer behind WriteTosaModule (tosa_writer.h): SSA names, exact constants
// (hex bit patterns, never decimal), and one helper per TOSA op in MLIR 22's generic form, which
// parses the same whatever each op's custom assembly looks like. tosa_emitter.cc holds the
// helpers, tosa_ops.cc the translation of each fusefuzz op.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "targets/native_server.h"

namespace fusefuzz::mlir {

// A value of @graph: its SSA name, shape (NCHW for the graph's values) and MLIR type
// (float32 tensors; i1 for comparisons, i8 for tosa.mul's shift, !tosa.shape for shapes).
struct Val {
  std::string ssa;
  Shape shape;
  std::string type;
};

std::string TensorType(const Shape& s, const std::string& element = "f32");
// A float attribute as its exact bit pattern: `0x3F800000 : f32`.
std::string FloatAttr(float v);

class Emitter {
 public:
  // `int8`: mlir:int8, whose QuantizeLinear / DequantizeLinear run on TOSA integers.
  Emitter(const NativeRequest& r, bool int8) : r_(r), int8_(int8) {}
  std::string Module();

 private:
  // tosa_emitter.cc
  std::string Fresh();
  Val Emit(const std::string& op, const std::vector<Val>& operands, const std::string& props,
           const Shape& out, const std::string& element = "f32");
  Val Const(const Shape& s, const std::vector<float>& data);
  Val Scalar(float v, size_t rank) { return Const(Shape(rank, 1), {v}); }
  Val ShapeValue(const std::vector<int64_t>& dims);  // a !tosa.shape constant
  Val ZeroPoint() { return Const({1}, {0.0f}); }
  Val IntConst(const Shape& s, const std::vector<int32_t>& data);
  Val Transpose(const Val& v, const std::vector<int64_t>& perm);
  Val ToNhwc(const Val& v) { return Transpose(v, {0, 2, 3, 1}); }
  Val ToNchw(const Val& v) { return Transpose(v, {0, 3, 1, 2}); }
  Val Reshape(const Val& v, const Shape& to);
  Val Slice(const Val& v, const std::vector<int64_t>& start, const Shape& size);
  Val PadConstant(const Val& v, const std::vector<int64_t>& before_after, float value);
  Val Unary(const std::string& op, const Val& v);
  // Elementwise with numpy broadcasting: the lower-rank operand is reshaped (leading 1s).
  Val Binary(const std::string& op, Val a, Val b);
  Val Clamp(const Val& v, float lo, float hi);
  Val Select(const Val& cond, const Val& a, const Val& b);

  // tosa_ops.cc
  void Node(const fusefuzz::Node& n);
  Val In(const fusefuzz::Node& n, size_t i) const;
  Val Activation(Op op, const AttrMap& attrs, const ParamMap& params, const Val& x,
                 const std::string& where);
  Val Conv(const fusefuzz::Node& n, const Val& x);
  Val Pool(const fusefuzz::Node& n, const Val& x);
  Val BinaryNode(const fusefuzz::Node& n);
  Val Gemm(const fusefuzz::Node& n, const Val& x);
  Val MatMul(const fusefuzz::Node& n, const Val& x);
  Val ReduceMean(const Val& x, std::vector<int64_t> axes, const Shape& out);
  Val BatchNorm(const fusefuzz::Node& n, const Val& x);
  // tosa_quant.cc (mlir:int8)
  Shape ChannelShape(const QuantParams& q, const Shape& x) const;
  Val Quantize(const fusefuzz::Node& n, const Val& x);
  Val Dequantize(const fusefuzz::Node& n, const Val& x);
  Val ToFloat(const Val& v);
  Val PadIntegers(const fusefuzz::Node& n, const Val& x);
  Val PadEdges(const Val& x, int64_t axis, int64_t before, int64_t after, const std::string& mode,
               const std::string& where);

  const NativeRequest& r_;
  const bool int8_;
  std::string body_;
  int next_ = 0;
  std::map<std::string, Val> values_;  // graph value -> its SSA value
};

}  // namespace fusefuzz::mlir
