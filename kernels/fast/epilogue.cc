// FusedConv epilogue: the node's EpilogueSteps decoded once into PostOps, then applied in order
// to every finished block of the conv output. Per element this is the exact unfused sequence
// (conv, then step 0, then step 1, ...), only without writing the whole tensor between steps.
#include "ir/error.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast {
namespace {

const float* ParamData(const EpilogueStep& s, const char* name, int64_t want,
                       const std::string& where) {
  auto it = s.params.find(name);
  if (it == s.params.end() || it->second.size() != want) {
    throw InputError(where, std::string("epilogue param '") + name + "' must have " +
                                std::to_string(want) + " values");
  }
  return it->second.data.data();
}

}  // namespace

Epilogue::Epilogue(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out) {
  for (size_t d = 0; d < 4; ++d) out_[d] = out[d];
  for (size_t i = 0; i < n.epilogue.size(); ++i) {
    const EpilogueStep& s = n.epilogue[i];
    const std::string where = "node '" + n.name + "' epilogue step " + std::to_string(i);
    PostOp op;
    op.kind = s.kind;
    switch (s.kind) {
      case EpilogueKind::kScaleShift:
        op.scale = ParamData(s, "scale", out[1], where);
        op.shift = ParamData(s, "shift", out[1], where);
        break;
      case EpilogueKind::kAdd: {
        if (s.input < 1 || static_cast<size_t>(s.input) >= inputs.size()) {
          throw InputError(where, "add refers to missing input " + std::to_string(s.input));
        }
        const Tensor& t = *inputs[static_cast<size_t>(s.input)];
        // Right-align the operand's dims against [N, M, OH, OW]; broadcast dims get stride 0.
        if (t.shape.size() > 4) throw InputError(where, "add operand rank > 4");
        const size_t lead = 4 - t.shape.size();
        int64_t stride = 1;
        for (size_t d = 4; d-- > 0;) {
          int64_t dim = d < lead ? 1 : t.shape[d - lead];
          if (dim != 1 && dim != out[d]) {
            throw InputError(where, "add operand " + ShapeToString(t.shape) +
                                        " does not broadcast to " + ShapeToString(out));
          }
          op.stride[d] = dim == 1 ? 0 : stride;
          stride *= dim;
        }
        op.add = t.data.data();
        op.add_dense = t.size() == NumElements(out);
        break;
      }
      case EpilogueKind::kActivation:
        op.act = MakeActivation(s.act, s.attrs, s.params, where);
        break;
      case EpilogueKind::kClamp:
        op.lo = static_cast<float>(AttrFloat(Op::Clip, s.attrs, "min", where));
        op.hi = static_cast<float>(AttrFloat(Op::Clip, s.attrs, "max", where));
        break;
    }
    ops_.push_back(std::move(op));
  }
}

void Epilogue::Apply(int64_t n, int64_t m, int64_t p0, int64_t p1, float* y) const {
  const int64_t count = p1 - p0;
  for (const PostOp& op : ops_) {
    switch (op.kind) {
      case EpilogueKind::kScaleShift: {
        const float a = op.scale[m], b = op.shift[m];
        for (int64_t i = 0; i < count; ++i) y[i] = y[i] * a + b;
        break;
      }
      case EpilogueKind::kAdd: {
        if (op.add_dense) {
          const float* src = op.add + (n * out_[1] + m) * out_[2] * out_[3] + p0;
          for (int64_t i = 0; i < count; ++i) y[i] += src[i];
          break;
        }
        const int64_t ow = out_[3];
        const float* base = op.add + n * op.stride[0] + m * op.stride[1];
        int64_t h = p0 / ow, w = p0 % ow;
        for (int64_t i = 0; i < count; ++i) {
          y[i] += base[h * op.stride[2] + w * op.stride[3]];
          if (++w == ow) w = 0, ++h;
        }
        break;
      }
      case EpilogueKind::kActivation:
        ApplyActivation(op.act, y, count, m);
        break;
      case EpilogueKind::kClamp: {
        const float lo = op.lo, hi = op.hi;
        for (int64_t i = 0; i < count; ++i) {
          const float t = y[i] < lo ? lo : y[i];  // ONNX Clip: hi everywhere when lo > hi
          y[i] = t > hi ? hi : t;
        }
        break;
      }
    }
  }
}

}  // namespace fusefuzz::fast
