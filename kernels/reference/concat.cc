// Reference Concat (channels, any rank >= 2) and Identity: pure copies of values and magnitudes.
#include "kernels/reference/ref_ops.h"

namespace fusefuzz::ref {

RefTensor RunConcat(const Node& n, const Inputs& in) {
  if (n.op == Op::Identity) return *in[0];
  Shape out_shape = in[0]->shape;
  out_shape[1] = 0;
  for (const RefTensor* t : in) out_shape[1] += t->shape[1];
  RefTensor y = Zeros(out_shape);
  const int64_t inner = InnerSize(out_shape, 2);
  size_t o = 0;
  for (int64_t nb = 0; nb < out_shape[0]; ++nb) {
    for (const RefTensor* t : in) {
      const size_t block = static_cast<size_t>(t->shape[1] * inner);
      const size_t begin = static_cast<size_t>(nb) * block;
      for (size_t k = 0; k < block; ++k, ++o) {
        y.value[o] = t->value[begin + k];
        y.mag[o] = t->mag[begin + k];
      }
    }
  }
  return y;
}

}  // namespace fusefuzz::ref
