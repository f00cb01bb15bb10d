// matmul-add-fuse: MatMul(A [M, K], constant B) -> Add of a constant bias  =>  Gemm(A) with B and
// C = bias (alpha = beta = 1, no transposes). The bias must be a per-output vector ([N], [1, N])
// or a scalar: what ONNX exporters emit for nn.Linear and what runtimes fuse. A bias that varies
// along rows ([M, 1], [M, N]) or adds dims stays an Add; A of rank > 2 has no Gemm form.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class MatMulAddFuse final : public TypedRule<Tensor> {
 public:
  std::string_view name() const override { return "matmul-add-fuse"; }
  std::string_view summary() const override {
    return "MatMul (rank-2 input) -> Add of a constant [N], [1, N] or scalar => Gemm with that "
           "bias; MatMul output has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::Add}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& add = g.nodes[static_cast<size_t>(anchor)];
    const BinaryOperands ops = GetBinaryOperands(add);
    if (add.inputs.size() != 1 || (ops.const_a == nullptr) == (ops.const_b == nullptr)) {
      return NoMatch("Add is not between a value and a constant");
    }
    const int p = ProducerOfInput(g, add, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::MatMul) {
      return NoMatch("Add's value operand is not produced by a MatMul");
    }
    const Node& mm = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, mm.output, anchor); !why.empty()) return NoMatch(why);
    const ShapeMap shapes = ValueShapes(g);
    const Shape& a = shapes.at(mm.inputs[0]);
    if (a.size() != 2)
      return NoMatch("MatMul input has rank " + std::to_string(a.size()) + ", not 2");
    const int64_t n = mm.params.at("B").shape[1];
    const Tensor& bias = ops.const_a ? *ops.const_a : *ops.const_b;
    const Shape& bs = bias.shape;
    const bool scalar = NumElements(bs) == 1 && bs.size() <= 2;
    const bool row = (bs == Shape{n}) || (bs == Shape{1, n});
    if (!scalar && !row) {
      return NoMatch("bias " + ShapeToString(bs) + " is not a per-output vector [" +
                     std::to_string(n) + "], [1, " + std::to_string(n) + "] or a scalar");
    }
    return MakeMatch({p, anchor}, bias);
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int mm = m.nodes[0], add = m.nodes[1];
    Node gemm = rw.node(mm);
    gemm.op = Op::Gemm;
    gemm.params["C"] = std::move(m.data);
    gemm.output = rw.node(add).output;
    rw.ReplaceNode(add, std::move(gemm));
    rw.EraseNode(mm);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeMatMulAddFuse() { return std::make_unique<MatMulAddFuse>(); }

}  // namespace fusefuzz
