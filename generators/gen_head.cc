// The classifier head of real conv nets (ResNet, MobileNet): [GlobalAvgPool] -> Flatten (or
// Reshape to [N, -1]) -> Gemm (or MatMul + Add of a bias) -> [BatchNorm1d] -> [activation] ->
// [Mul by a broadcast constant]. Each step is where a rule fuses (gemm-bn-fold,
// gemm-activation-fuse, matmul-add-fuse) or, for the Mul, where TFLite folded a scalar as if it
// were per output channel (tensorflow #39572).
#include "generators/gen_builder.h"

namespace fusefuzz::gen {
namespace {

// Bias-like constant for an [M, N] result: usually [N], else another shape that broadcasts to
// [M, N] ([1], [1, N], [M, 1], [M, N]).
Shape BiasShape(Builder& b, int64_t m, int64_t n) {
  if (!b.src().Bool(b.cfg().probabilities.head_bias_shape)) return {n};
  const std::vector<Shape> shapes = {{1}, {1, n}, {m, 1}, {m, n}};
  return shapes[static_cast<size_t>(b.src().Int(0, int64_t(shapes.size()) - 1))];
}

}  // namespace

bool Builder::HeadAllowed() const {
  return (Allowed(Op::Flatten) || Allowed(Op::Reshape)) &&
         (Allowed(Op::Gemm) || Allowed(Op::MatMul));
}

std::string Builder::EmitHead(Op op, const std::string& x, int64_t budget) {
  const GenProbabilities& p = cfg_.probabilities;
  std::string v = x;
  // The flatten and the matrix op take 2 nodes; each optional step needs one more.
  int64_t spare = budget - 2;
  auto take = [&spare] { return spare > 0 ? (--spare, true) : false; };
  if (Allowed(Op::GlobalAvgPool) && spare > 0 && src_.Bool(p.head_global_pool) && take()) {
    v = AddNode(Op::GlobalAvgPool, {v});
  }
  // The flatten: `op` itself when it is one, else whichever is allowed (Flatten 3:1).
  bool flatten = op == Op::Flatten;
  if (op != Op::Flatten && op != Op::Reshape) {
    const double w[] = {Allowed(Op::Flatten) ? 3.0 : 0.0, Allowed(Op::Reshape) ? 1.0 : 0.0};
    flatten = src_.Pick(w) == 0;
  }
  if (flatten) {
    v = AddNode(Op::Flatten, {v});  // axis 1: [N, C*H*W]
  } else {
    // PyTorch's x.view(x.size(0), -1), or the explicit count.
    const Shape& s = ShapeOf(v);
    const int64_t rest = s[1] * s[2] * s[3];
    const std::vector<int64_t> shape =
        src_.Bool(0.5) ? std::vector<int64_t>{0, -1} : std::vector<int64_t>{s[0], rest};
    v = AddNode(Op::Reshape, {v}, {{"shape", shape}});
  }
  const int64_t m = ShapeOf(v)[0], k = ShapeOf(v)[1];
  const int64_t n = src_.Int(1, cfg_.limits.max_channels);
  bool gemm = op == Op::Gemm;
  if (op != Op::Gemm && op != Op::MatMul) {
    const double w[] = {Allowed(Op::Gemm) ? 3.0 : 0.0, Allowed(Op::MatMul) ? 1.0 : 0.0};
    gemm = src_.Pick(w) == 0;
  }
  if (gemm) {
    AttrMap attrs;
    ParamMap params;
    const bool trans_b = src_.Bool(p.head_trans_b);
    if (trans_b) attrs["transB"] = int64_t{1};
    params["B"] = ConvWeights(trans_b ? Shape{n, k} : Shape{k, n}, k);
    if (src_.Bool(p.head_gemm_bias)) {
      const Shape cs = BiasShape(*this, m, n);
      params["C"] = UniformTensor(cs, -1.0, 1.0);
    }
    if (src_.Bool(p.head_alpha_beta)) {
      // float32-exact, one of them negative sometimes.
      const double kAlpha[] = {0.5, 2.0, -1.0, 0.25};
      attrs["alpha"] = kAlpha[src_.Int(0, 3)];
      attrs["beta"] = kAlpha[src_.Int(0, 3)];
    }
    v = AddNode(Op::Gemm, {v}, std::move(attrs), std::move(params));
  } else {
    v = AddNode(Op::MatMul, {v}, {}, {{"B", ConvWeights({k, n}, k)}});
    if (Allowed(Op::Add) && take()) {
      const Shape cs = BiasShape(*this, m, n);
      v = AddNode(Op::Add, {v}, {}, {{"B", UniformTensor(cs, -1.0, 1.0)}});
    }
  }
  if (Allowed(Op::BatchNorm) && spare > 0 && src_.Bool(p.head_bn) && take()) {
    v = EmitBatchNorm(v);
  }
  if (AnyActivation() && spare > 0 && src_.Bool(p.head_act) && take()) {
    v = EmitActivation(*PickActivation(), v);
  }
  if (Allowed(Op::Mul) && spare > 0 && src_.Bool(p.head_mul) && take()) {
    v = EmitBinaryConst(Op::Mul, v);
  }
  return v;
}

}  // namespace fusefuzz::gen
