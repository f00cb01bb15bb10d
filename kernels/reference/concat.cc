// Reference Concat (any axis, any rank), Identity, Flatten and Reshape: pure copies of values,
// magnitudes and error scales (a row-major reshape keeps the element order).
#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {

RefTensor RunConcat(const Node& n, const Inputs& in) {
  if (n.op == Op::Identity) return *in[0];
  if (n.op == Op::Flatten || n.op == Op::Reshape) {
    RefTensor y = *in[0];
    y.shape = InferNodeShape(n, {in[0]->shape});
    return y;
  }
  Shape out_shape = in[0]->shape;
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  int64_t axis = AttrInt(n, "axis");
  if (axis < 0) axis += rank;
  const size_t ax = static_cast<size_t>(axis);
  out_shape[ax] = 0;
  for (const RefTensor* t : in) out_shape[ax] += t->shape[ax];
  RefTensor y = Zeros(out_shape);
  // Integers of one type stay integer-valued (and judged on the grid).
  bool grid = true;
  for (const RefTensor* t : in) {
    grid &=
        !t->grid_t.empty() && t->grid_qmin == in[0]->grid_qmin && t->grid_qmax == in[0]->grid_qmax;
  }
  if (grid) {
    y.grid_t.resize(y.value.size());
    y.grid_e.resize(y.value.size());
    y.grid_es.resize(y.value.size());
    y.grid_qmin = in[0]->grid_qmin;
    y.grid_qmax = in[0]->grid_qmax;
    for (const RefTensor* t : in) y.grid_ties_either |= t->grid_ties_either;
  }
  // Each input contributes one contiguous block of dim(axis) * inner elements per outer index.
  int64_t outer = 1;
  for (size_t d = 0; d < ax; ++d) outer *= out_shape[d];
  const int64_t inner = InnerSize(out_shape, ax + 1);
  size_t o = 0;
  for (int64_t nb = 0; nb < outer; ++nb) {
    for (const RefTensor* t : in) {
      const size_t block = static_cast<size_t>(t->shape[ax] * inner);
      const size_t begin = static_cast<size_t>(nb) * block;
      for (size_t k = 0; k < block; ++k, ++o) {
        y.value[o] = t->value[begin + k];
        y.mag[o] = t->mag[begin + k];
        y.sigma[o] = t->sigma[begin + k];
        y.peak[o] = t->peak[begin + k];
        if (grid) {
          y.grid_t[o] = t->grid_t[begin + k];
          y.grid_e[o] = t->grid_e[begin + k];
          y.grid_es[o] = t->grid_es.empty() ? t->grid_e[begin + k] : t->grid_es[begin + k];
        }
      }
    }
  }
  return y;
}

}  // namespace fusefuzz::ref
