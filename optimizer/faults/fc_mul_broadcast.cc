// fc-mul-broadcast: Gemm (fully connected) -> Mul by a constant folded into the Gemm's weights and
// bias as if the constant were a per-output-channel vector, whatever its broadcast shape.
//
// Reproduces tensorflow/tensorflow#39572: the TFLite converter fused a FullyConnected followed by
// a Mul with a constant into the FullyConnected, reading the constant's elements as one scale
// per output channel. For a scalar or an [N] constant that is right; for a constant that
// broadcasts along the other axis ([M, 1], or a full [M, N]) the fused model scaled output
// column j by element j of the flattened constant (wrapping around) instead of scaling row i by
// c[i], and gave wrong results with no error.
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rules/gemm_fold.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {
namespace {

class FcMulBroadcast final : public TypedRule<GemmFolded> {
 public:
  std::string_view name() const override { return "fc-mul-broadcast"; }
  std::string_view summary() const override {
    return "Gemm -> Mul by a constant of any broadcast shape => Gemm with column j scaled by "
           "the constant's flat element j (mod its size); wrong unless it is a scalar or [N]";
  }

  RootOps roots() const override { return RootOps::Of({Op::Mul}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& mul = g.nodes[static_cast<size_t>(anchor)];
    const BinaryOperands ops = GetBinaryOperands(mul);
    if (mul.inputs.size() != 1 || (ops.const_a == nullptr) == (ops.const_b == nullptr)) {
      return NoMatch("Mul is not between a value and a constant");
    }
    const int p = ProducerOfInput(g, mul, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Gemm) {
      return NoMatch("Mul's value operand is not produced by a Gemm");
    }
    const Node& gemm = g.nodes[size_t(p)];
    if (!gemm.epilogue.empty()) return NoMatch("the Gemm has an epilogue");
    if (auto why = SoleUseProblem(g, gemm.output, anchor); !why.empty()) return NoMatch(why);
    const ShapeMap shapes = ValueShapes(g);
    const Shape& y = shapes.at(gemm.output);
    if (shapes.at(mul.output) != y) return NoMatch("the Mul changes the Gemm's output shape");
    const Tensor& c = ops.const_a ? *ops.const_a : *ops.const_b;
    // The bug: the constant's data read as the per-output-channel scale, never checking that
    // its shape is [N] (or a scalar).
    std::vector<double> s(static_cast<size_t>(y[1]));
    for (size_t j = 0; j < s.size(); ++j) s[j] = static_cast<double>(c.data[j % c.data.size()]);
    GemmFolded f;
    if (auto why = FoldColumnAffineIntoGemm(gemm, y[0], s, {}, &f); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({p, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceByFoldedGemm(rw, m.nodes[0], m.nodes[1], std::move(m.data));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultFcMulBroadcast() { return std::make_unique<FcMulBroadcast>(); }

}  // namespace fusefuzz
