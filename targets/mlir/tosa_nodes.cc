// The translation of whole nodes (tosa_emitter.h): the dispatch over every op, the epilogues,
// and the ops built from several TOSA ops (matrix products, the Pad modes TOSA PAD lacks).
#include <stdexcept>

#include "targets/mlir/tosa_emitter.h"

namespace fusefuzz::mlir {
namespace {

std::string Where(const fusefuzz::Node& n) { return " (node '" + n.name + "')"; }

}  // namespace

// Pad modes TOSA PAD lacks, one axis at a time (as ONNX and numpy pad): the border rows made of
// slices of the input: repeated (edge, tosa.tile), mirrored without the edge (reflect,
// tosa.reverse) or taken from the other end (wrap), then concatenated.
Val Emitter::PadEdges(const Val& x, int64_t axis, int64_t before, int64_t after,
                      const std::string& mode, const std::string& where) {
  if (before == 0 && after == 0) return x;
  const int64_t size = x.shape[size_t(axis)];
  auto rows = [&](int64_t from, int64_t count) {
    std::vector<int64_t> start(x.shape.size(), 0);
    Shape extent = x.shape;
    start[size_t(axis)] = from;
    extent[size_t(axis)] = count;
    return Slice(x, start, extent);
  };
  auto border = [&](int64_t count, bool at_start) {
    if (mode == "edge") {
      std::vector<int64_t> times(x.shape.size(), 1);
      times[size_t(axis)] = count;
      const Val edge = rows(at_start ? 0 : size - 1, 1);
      Shape out = edge.shape;
      out[size_t(axis)] = count;
      return Emit("tile", {edge, ShapeValue(times)}, "", out);
    }
    if (mode == "reflect") {
      const Val r = rows(at_start ? 1 : size - 1 - count, count);
      return Emit("reverse", {r}, "axis = " + std::to_string(axis) + " : i32", r.shape);
    }
    return rows(at_start ? size - count : 0, count);  // wrap
  };
  if (mode != "edge" && mode != "reflect" && mode != "wrap") {
    throw Unsupported("Pad mode '" + mode + "'" + where);
  }
  // ONNX: reflect needs pads below the size, wrap pads at most the size (no repeated wrap).
  const int64_t limit = mode == "reflect" ? size - 1 : mode == "wrap" ? size : before + after;
  if (before > limit || after > limit) {
    throw Unsupported("Pad mode '" + mode + "' with pads beyond the input" + where);
  }
  std::vector<Val> parts;
  if (before > 0) parts.push_back(border(before, true));
  parts.push_back(x);
  if (after > 0) parts.push_back(border(after, false));
  Shape out = x.shape;
  out[size_t(axis)] += before + after;
  return Emit("concat", parts, "axis = " + std::to_string(axis) + " : i32", out);
}

Val Emitter::Gemm(const fusefuzz::Node& n, const Val& x) {
  const GemmDims d = GetGemmDims(n, x.shape);
  const Val a = d.trans_a ? Transpose(x, {1, 0}) : x;
  const Tensor& b = n.params.at("B");
  std::vector<float> kn(size_t(d.k * d.n));
  for (int64_t i = 0; i < d.k; ++i)
    for (int64_t j = 0; j < d.n; ++j)
      kn[size_t(i * d.n + j)] =
          d.trans_b ? b.data[size_t(j * d.k + i)] : b.data[size_t(i * d.n + j)];
  const Val mm = Emit(
      "matmul", {Reshape(a, {1, d.m, d.k}), Const({1, d.k, d.n}, kn), ZeroPoint(), ZeroPoint()}, "",
      {1, d.m, d.n});
  Val y = Reshape(mm, {d.m, d.n});
  if (d.alpha != 1) y = Binary("mul", y, Scalar(static_cast<float>(d.alpha), 2));
  if (auto it = n.params.find("C"); it != n.params.end()) {
    Val c = Const(it->second.shape, it->second.data);
    if (d.beta != 1) c = Binary("mul", c, Scalar(static_cast<float>(d.beta), c.shape.size()));
    y = Binary("add", y, c);
  }
  return y;
}

Val Emitter::MatMul(const fusefuzz::Node& n, const Val& x) {
  const Tensor& b = n.params.at("B");
  const int64_t k = b.shape[0], cols = b.shape[1];
  const int64_t rows = NumElements(x.shape) / k;  // every batch's rows, row-major
  const Val mm = Emit(
      "matmul", {Reshape(x, {1, rows, k}), Const({1, k, cols}, b.data), ZeroPoint(), ZeroPoint()},
      "", {1, rows, cols});
  return Reshape(mm, r_.shapes.at(n.output));
}

void Emitter::Node(const fusefuzz::Node& n) {
  if (done_.count(n.name)) return;  // the activation or Q of an integer conv (tosa_qconv.cc)
  const std::string where = Where(n);
  const Val x = n.inputs.empty() ? Val{} : In(n, 0);
  // The ops that read quantized integers: the rest take floats.
  if (n.op != Op::DequantizeLinear && n.op != Op::Pad && n.op != Op::QLinearConv &&
      n.op != Op::QLinearAdd) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Val& v = In(n, i);
      if (v.type != TensorType(v.shape)) {
        throw Unsupported(std::string(OpName(n.op)) + " on quantized integers" + where);
      }
    }
  }
  const Shape& out = r_.shapes.at(n.output);
  Val y;
  switch (n.op) {
    case Op::Conv:
    case Op::FusedConv:
      if (RunQdqConv(n)) return;
      y = Conv(n, x);
      break;
    case Op::Gemm:
      y = Gemm(n, x);
      break;
    case Op::BatchNorm:
      y = BatchNorm(n, x);
      break;
    case Op::LayerNorm:
    case Op::GroupNorm:
    case Op::InstanceNorm:
    case Op::Sqrt:
      throw Unsupported(std::string(OpName(n.op)) +
                        ": TOSA has no float square root or division, only rsqrt and reciprocal "
                        "approximations" +
                        where);
    case Op::Relu:
    case Op::Relu6:
    case Op::Clip:
    case Op::LeakyRelu:
    case Op::PRelu:
    case Op::Elu:
    case Op::Sigmoid:
    case Op::HardSigmoid:
    case Op::Tanh:
    case Op::Silu:
    case Op::HardSwish:
    case Op::Gelu:
      y = Activation(n.op, n.attrs, n.params, x, where);
      break;
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
      y = BinaryNode(n);
      break;
    case Op::Pad: {
      const std::vector<int64_t> p = AttrInts(n, "pads");  // t, l, b, r
      const std::string mode = AttrString(n, "mode");
      if (x.type != TensorType(x.shape)) {
        y = PadIntegers(n, x);
      } else if (mode == "constant") {
        y = PadConstant(x, {0, 0, 0, 0, p[0], p[2], p[1], p[3]},
                        static_cast<float>(AttrFloat(n, "value")));
      } else {
        y = PadEdges(PadEdges(x, 2, p[0], p[2], mode, where), 3, p[1], p[3], mode, where);
      }
      break;
    }
    case Op::MaxPool:
    case Op::AvgPool:
      y = Pool(n, x);
      break;
    case Op::GlobalAvgPool:
      y = ReduceMean(x, {2, 3}, out);
      break;
    case Op::ReduceMean:
      y = ReduceMean(x, AttrInts(n, "axes"), out);
      break;
    case Op::Concat: {
      std::vector<Val> parts;
      for (size_t i = 0; i < n.inputs.size(); ++i) parts.push_back(In(n, i));
      int64_t axis = AttrInt(n, "axis");
      if (axis < 0) axis += int64_t(out.size());
      y = Emit("concat", parts, "axis = " + std::to_string(axis) + " : i32", out);
      break;
    }
    case Op::Identity:
      y = x;
      break;
    case Op::Flatten:
    case Op::Reshape:
      y = Reshape(x, out);
      break;
    case Op::MatMul:
      y = MatMul(n, x);
      break;
    case Op::Pow: {
      const double e = AttrFloat(n, "exponent");
      // POW is undefined for a negative base (TOSA spec, POW): products instead.
      if (e == 1) {
        y = x;
      } else if (e == 2) {
        y = Binary("mul", x, x);
      } else if (e == 3) {
        y = Binary("mul", Binary("mul", x, x), x);
      } else {
        throw Unsupported("Pow with exponent " + std::to_string(e) +
                          ": TOSA POW is undefined for negative bases" + where);
      }
      break;
    }
    case Op::Reciprocal:
      y = Unary("reciprocal", x);
      break;
    case Op::Exp:
      y = Unary("exp", x);
      break;
    case Op::Log:
      y = Unary("log", x);
      break;
    case Op::Erf:
      y = Unary("erf", x);
      break;
    case Op::QuantizeLinear:
    case Op::DequantizeLinear:
      if (!int8_) throw Unsupported(std::string(OpName(n.op)) + " in mlir:fp32" + where);
      if (RunRequant(n)) return;
      values_[n.output] = n.op == Op::QuantizeLinear ? Quantize(n, x) : Dequantize(n, x);
      return;
    case Op::QLinearConv:
      if (!int8_) throw Unsupported("QLinearConv in mlir:fp32" + where);
      values_[n.output] = QLinearConv(n, x);  // its activation included
      return;
    case Op::QLinearAdd:
      if (!int8_) throw Unsupported("QLinearAdd in mlir:fp32" + where);
      values_[n.output] = QLinearAdd(n);
      return;
    case Op::Min:
    case Op::Max:
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::Softmax:
    case Op::Transpose:
      // Not in the hello (mlir_target_main.cc): fusefuzz never sends them.
      throw Unsupported(std::string(OpName(n.op)) + " is not translated" + where);
  }
  // The epilogue of a FusedConv or Gemm: its unfused steps, in order.
  for (const EpilogueStep& s : n.epilogue) {
    switch (s.kind) {
      case EpilogueKind::kScaleShift: {
        const Tensor &sc = s.params.at("scale"), &sf = s.params.at("shift");
        Shape cs(y.shape.size(), 1);
        cs[1] = int64_t(sc.data.size());
        y = Binary("add", Binary("mul", y, Const(cs, sc.data)), Const(cs, sf.data));
        break;
      }
      case EpilogueKind::kAdd:
        y = Binary("add", y, In(n, size_t(s.input)));
        break;
      case EpilogueKind::kActivation:
        y = Activation(s.act, s.attrs, s.params, y, where);
        break;
      case EpilogueKind::kClamp:
        y = Activation(Op::Clip, s.attrs, {}, y, where);
        break;
    }
  }
  values_[n.output] = y;
}

}  // namespace fusefuzz::mlir
