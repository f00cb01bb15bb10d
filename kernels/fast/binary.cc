// Add / Sub / Mul / Div / Min / Max with numpy broadcasting; either operand may be a constant param
// ("A" or "B"). Shapes are right-aligned to rank 4; a broadcast dim has stride 0, and the innermost
// loop is specialised on whether each side is contiguous or repeated.
#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast::FUSEFUZZ_ISA {
namespace {

struct Operand {
  const float* data;
  int64_t stride[4];
};

Operand MakeOperand(const Tensor& t, const int64_t out[4], const std::string& where) {
  if (t.shape.size() > 4) throw InputError(where, "operand rank > 4");
  Operand o{t.data.data(), {0, 0, 0, 0}};
  const size_t lead = 4 - t.shape.size();
  int64_t stride = 1;
  for (size_t d = 4; d-- > 0;) {
    const int64_t dim = d < lead ? 1 : t.shape[d - lead];
    if (dim != 1 && dim != out[d]) {
      throw InputError(where, "operand " + ShapeToString(t.shape) + " does not broadcast");
    }
    o.stride[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return o;
}

template <typename F>
void Row(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i * sa], b[i * sb]);
  }
}

template <typename F>
void Broadcast(const Operand& a, const Operand& b, const int64_t out[4], float* y, int threads,
               F f) {
  ParallelFor(threads, out[0] * out[1], [&](int64_t plane) {
    const int64_t i0 = plane / out[1], i1 = plane % out[1];
    const float* pa = a.data + i0 * a.stride[0] + i1 * a.stride[1];
    const float* pb = b.data + i0 * b.stride[0] + i1 * b.stride[1];
    float* py = y + plane * out[2] * out[3];
    for (int64_t i2 = 0; i2 < out[2]; ++i2) {
      Row(pa + i2 * a.stride[2], a.stride[3], pb + i2 * b.stride[2], b.stride[3], py + i2 * out[3],
          out[3], f);
    }
  });
}

}  // namespace

void BinaryOp(const Node& n, const std::vector<const Tensor*>& inputs, int threads, Tensor& y) {
  const Shape& out_shape = y.shape;
  const std::string where = "node '" + n.name + "'";
  if (out_shape.size() > 4) throw InputError(where, "rank > 4");
  const BinaryOperands ops = GetBinaryOperands(n);
  auto pick = [&](const Tensor* constant, int input) -> const Tensor& {
    if (constant) return *constant;
    if (input < 0 || static_cast<size_t>(input) >= inputs.size()) {
      throw InputError(where, "missing operand input " + std::to_string(input));
    }
    return *inputs[static_cast<size_t>(input)];
  };
  int64_t out[4] = {1, 1, 1, 1};
  const size_t lead = 4 - out_shape.size();
  for (size_t d = 0; d < out_shape.size(); ++d) out[lead + d] = out_shape[d];
  const Operand a = MakeOperand(pick(ops.const_a, ops.input_a), out, where);
  const Operand b = MakeOperand(pick(ops.const_b, ops.input_b), out, where);
  float* py = y.data.data();
  switch (n.op) {
    case Op::Add:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return u + v; });
      break;
    case Op::Sub:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return u - v; });
      break;
    case Op::Mul:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return u * v; });
      break;
    case Op::Div:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return u / v; });
      break;
    case Op::Min:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return v < u ? v : u; });
      break;
    case Op::Max:
      Broadcast(a, b, out, py, threads, [](float u, float v) { return u < v ? v : u; });
      break;
    default:
      throw InputError(where, "not a binary op");
  }
}

}  // namespace fusefuzz::fast::FUSEFUZZ_ISA
