// The statement writer behind WriteTosaModule (tosa_writer.h): SSA names, exact constants
// (hex bit patterns, never decimal), and one helper per TOSA op in MLIR 22's generic form, which
// parses the same whatever each op's custom assembly looks like. tosa_emitter.cc holds the
// helpers, tosa_ops.cc the translation of each fusefuzz op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
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
// The element type of a value's tensor type: "f32", "i32", "i8", "i1".
std::string ElementType(const Val& v);
// A float attribute as its exact bit pattern: `0x3F800000 : f32`.
std::string FloatAttr(float v);

// An integer convolution's weights (OIHW integers in [-128, 127] held in floats) and zero points.
struct IntegerWeights {
  std::vector<float> weights;
  int32_t input_zp = 0, weight_zp = 0;
};

// A DequantizeLinear -> Conv [-> Relu | Relu6 | Clip] -> QuantizeLinear chain that mlir:int8 runs
// as one integer conv (tosa_qconv.cc).
struct QdqConv {
  const fusefuzz::Node* dq = nullptr;
  const fusefuzz::Node* act = nullptr;
  const fusefuzz::Node* q = nullptr;
  IntegerWeights w;
};

// The bounds of an integer conv's or requantization's activation (Relu, Relu6, Clip) as reals,
// +-infinity for none (tosa_qconv.cc). Throws Unsupported for other ops.
std::pair<double, double> ActivationBounds(Op act, const AttrMap& attrs, const std::string& where);

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
  // Integer constants: i32, or i8 (values in [-128, 127]).
  Val IntConst(const Shape& s, const std::vector<int32_t>& data,
               const std::string& element = "i32");
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
  Val ConvNhwc(const fusefuzz::Node& n, const Val& x, const std::vector<float>& bias,
               const std::optional<IntegerWeights>& integer_weights);
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
  Val QLinearAdd(const fusefuzz::Node& n);
  // tosa_qconv.cc, tosa_qchain.cc (mlir:int8)
  Val QLinearConv(const fusefuzz::Node& n, const Val& x);
  void FindQdqConvs();
  bool RunQdqConv(const fusefuzz::Node& n);
  bool RunRequant(const fusefuzz::Node& n);
  Val FinishInt8(Val y, const QuantParams& qy, double lo_q, double hi_q, const std::string& where);
  Val IntegerConv(const fusefuzz::Node& n, const Val& x, const QuantParams& qx, IntegerWeights w,
                  const std::vector<float>& bias, const std::vector<double>& factors,
                  const QuantParams& qy, double lo_q, double hi_q);
  Val SignedInt8(const Val& x, const QuantParams& q, int32_t* zero_point);
  Val Rescale(const Val& v, const std::vector<double>& factors, int32_t input_zp, int32_t output_zp,
              const std::string& element, double max_abs, const std::string& where);
  Val PadEdges(const Val& x, int64_t axis, int64_t before, int64_t after, const std::string& mode,
               const std::string& where);

  const NativeRequest& r_;
  const bool int8_;
  std::string body_;
  int next_ = 0;
  std::map<std::string, Val> values_;         // graph value -> its SSA value
  std::map<std::string, QdqConv> qdq_convs_;  // by the Conv's name
  std::map<std::string, QdqConv> requants_;   // DQ [-> act] -> Q, by the DQ's name
  std::set<std::string> done_;                // nodes an integer conv ran already
};

}  // namespace fusefuzz::mlir
