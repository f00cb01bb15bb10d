// Reference Concat (any axis, any rank), Identity, Flatten, Reshape and Transpose: pure copies
// of values, magnitudes and error scales (a row-major reshape keeps the element order).
#include "ir/verifier.h"
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {

namespace {

// Transpose: output element at multi-index o reads the input at i with i[perm[d]] = o[d]. Values
// move unchanged, so magnitudes, error scales and peaks move with them; no sum stays open.
RefTensor Transpose(const Node& n, const RefTensor& x) {
  const std::vector<int64_t> perm = TransposePerm(n, x.shape.size());
  RefTensor y = Zeros(InferNodeShape(n, {x.shape}));
  const size_t rank = x.shape.size();
  std::vector<int64_t> in_stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) in_stride[d] = in_stride[d + 1] * x.shape[d + 1];
  std::vector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < y.value.size(); ++o) {
    int64_t i = 0;
    for (size_t d = 0; d < rank; ++d) i += idx[d] * in_stride[static_cast<size_t>(perm[d])];
    const size_t s = static_cast<size_t>(i);
    y.value[o] = x.value[s];
    y.mag[o] = x.mag[s];
    y.sigma[o] = x.sigma[s];
    y.peak[o] = x.peak[s];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < y.shape[d]) break;
      idx[d] = 0;
    }
  }
  return y;
}

}  // namespace

RefTensor RunConcat(const Node& n, const Inputs& in) {
  if (n.op == Op::Identity) return *in[0];
  if (n.op == Op::Transpose) return Transpose(n, *in[0]);
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
