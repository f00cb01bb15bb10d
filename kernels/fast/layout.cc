// Data movement: Pad (constant / reflect / edge / wrap on H and W) and Concat along any axis.
#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast {

void PadOp(const Node& n, const Tensor& x, Tensor& y) {
  const Shape& out_shape = y.shape;
  const auto pads = AttrInts(n, "pads");  // top, left, bottom, right
  const std::string mode = AttrString(n, "mode");
  const bool reflect = mode == "reflect", edge = mode == "edge", wrap = mode == "wrap";
  const float value = static_cast<float>(AttrFloat(n, "value"));
  const int64_t h = x.shape[2], w = x.shape[3], oh = out_shape[2], ow = out_shape[3];
  const int64_t top = pads[0], left = pads[1];
  // Source index of an output coordinate, or -1 for a constant fill.
  auto source = [=](int64_t o, int64_t pad, int64_t size) -> int64_t {
    int64_t s = o - pad;
    if (s >= 0 && s < size) return s;
    if (edge) return s < 0 ? 0 : size - 1;
    if (wrap) return s < 0 ? s + size : s - size;  // wrap pads are <= size (verified)
    if (!reflect) return -1;
    if (s < 0) return -s;       // reflect pads are < size (verified), one bounce suffices
    return 2 * (size - 1) - s;  // mirror without repeating the edge (ONNX reflect)
  };
  std::vector<int64_t> col(static_cast<size_t>(ow));
  for (int64_t ox = 0; ox < ow; ++ox) col[static_cast<size_t>(ox)] = source(ox, left, w);
  std::fill(y.data.begin(), y.data.end(), value);
  for (int64_t p = 0; p < x.shape[0] * x.shape[1]; ++p) {
    const float* xp = x.data.data() + p * h * w;
    float* yp = y.data.data() + p * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t sy = source(oy, top, h);
      if (sy < 0) continue;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t sx = col[static_cast<size_t>(ox)];
        if (sx >= 0) yp[oy * ow + ox] = xp[sy * w + sx];
      }
    }
  }
}

void ConcatOp(const Node& n, const std::vector<const Tensor*>& inputs, Tensor& y) {
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  int64_t axis = AttrInt(n, "axis");
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape[static_cast<size_t>(d)];
  const int64_t out_block = y.size() / outer;  // one outer index's worth of output
  int64_t offset = 0;
  for (const Tensor* t : inputs) {
    const int64_t block = t->size() / outer;
    for (int64_t i = 0; i < outer; ++i) {
      std::memcpy(y.data.data() + i * out_block + offset, t->data.data() + i * block,
                  static_cast<size_t>(block) * sizeof(float));
    }
    offset += block;
  }
}

}  // namespace fusefuzz::fast
