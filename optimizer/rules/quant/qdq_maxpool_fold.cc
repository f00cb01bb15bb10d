// qdq-maxpool-fold: DQ -> MaxPool -> Q with equal parameters  =>  MaxPool on the integers.
// DQ is strictly increasing only for a positive scale: then max commutes with it and
// Q(DQ(max q)) == max q. With a negative scale DQ reverses the order and the max becomes a min.
// Per-axis parameters must not vary inside a window (only the channel axis 1 is allowed).
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/quant/quant_pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

class QdqMaxPoolFold final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "qdq-maxpool-fold"; }
  std::string_view summary() const override {
    return "DQ -> MaxPool -> Q => MaxPool on the integers; DQ and Q parameters equal; every "
           "scale > 0; per tensor or per axis 1; DQ input holds integers of its type; DQ and "
           "MaxPool outputs have no other consumer and are not graph outputs";
  }

  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int dq = -1, pool = -1;
    if (auto why = QdqMaxPoolProblem(g, anchor, &dq, &pool); !why.empty()) return NoMatch(why);
    if (auto why = PositiveScaleProblem(QuantOf(g.nodes[size_t(dq)], "x"), "DQ 'x'");
        !why.empty()) {
      return NoMatch(why);
    }
    return MakeMatch({dq, pool, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    ReplaceByIntegerMaxPool(rw, m.nodes[0], m.nodes[1], m.nodes[2]);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeQdqMaxPoolFold() { return std::make_unique<QdqMaxPoolFold>(); }

}  // namespace fusefuzz
