// gemm-activation-fuse: Gemm -> activation  =>  Gemm whose epilogue ends with the activation (its
// attrs and params). Existing steps keep their order. A PRelu fuses only when its slope is per
// output column or a scalar ([N], [1, N], [1]; stored as [N] or [1]), not per row ([M, 1]).
#include <memory>

#include "ir/broadcast.h"
#include "ir/verifier.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class GemmActivationFuse final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "gemm-activation-fuse"; }
  std::string_view summary() const override {
    return "Gemm -> activation => Gemm with the activation appended to its epilogue; Gemm "
           "output has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Family(OpFamily::kActivation); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& act = g.nodes[static_cast<size_t>(anchor)];
    const int p = ProducerOfInput(g, act, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Gemm) {
      return NoMatch("activation input is not produced by a Gemm");
    }
    if (auto why = SoleUseProblem(g, g.nodes[size_t(p)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    if (act.op == Op::PRelu &&
        !AsPerChannelSlope(act.params.at("slope").shape, ctx.shapes().at(act.inputs[0]))) {
      return NoMatch("PRelu slope is not per column: it varies along the rows");
    }
    return MakeMatch({p, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    // A PRelu slope is per column or a scalar (Match).
    AppendEpilogueStep(rw, m.nodes[0], m.nodes[1], Op::Gemm,
                       ActivationStep(rw.node(m.nodes[1]), Op::Gemm));
  }
};

}  // namespace

std::unique_ptr<Rule> MakeGemmActivationFuse() { return std::make_unique<GemmActivationFuse>(); }

}  // namespace fusefuzz
