// qdq-pair-merge: P -> DQ -> Q, P a quantized op (Q, QLinearConv, QLinearAdd) of the DQ's type
// and the DQ's and Q's parameters equal  =>  P, under the Q's output name. Q(DQ(q)) == q for
// every integer q of the type: (q - z) * s and its division by s are each rounded once in
// float32, far less than half a step apart. P's and the DQ's outputs must have no other use
// and not be graph outputs: a value that fans out keeps its dequantized form for the others.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QdqPairMerge final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "qdq-pair-merge"; }
  std::string_view summary() const override {
    return "P -> DQ -> Q => P (P a quantized op); DQ and Q parameters equal; P's output of the "
           "DQ's type; P and DQ outputs have no other consumer and are not graph outputs";
  }

  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1, dq = -1;
    if (auto why = QdqPairProblem(g, anchor, &p, &dq); !why.empty()) return NoMatch(why);
    if (auto why = SoleUseProblem(g, g.nodes[size_t(dq)].output, anchor); !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({p, dq, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    Node merged = rw.node(m.nodes[0]);
    merged.output = rw.node(m.nodes[2]).output;
    rw.ReplaceNode(m.nodes[2], std::move(merged));
    rw.EraseNode(m.nodes[0]);
    rw.EraseNode(m.nodes[1]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQdqPairMerge() { return std::make_unique<QdqPairMerge>(); }

}  // namespace fusefuzz
