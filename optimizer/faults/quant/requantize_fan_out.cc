// requantize-fan-out: qdq-pair-merge on a dequantized value that fans out. MXNet #20323 and
// MIGraphX #3269: a requantize (dequantize then quantize) was fused into an output that had
// other consumers, and those consumers then read the integers instead of the dequantized
// values. Visible whenever the DQ has another consumer (unless s == 1 and z == 0).
// Reproduces the bug named above (docs/faults.md, "Quantized faults").
#include <memory>

#include "optimizer/faults/faults.h"
#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/quant/quant_pattern.h"

namespace fusefuzz {
namespace {

class RequantizeFanOut final : public TypedRule<NoData> {
 public:
  std::string_view name() const override { return "requantize-fan-out"; }
  std::string_view summary() const override {
    return "MXNet #20323, MIGraphX #3269: P -> DQ -> Q => P although the DQ output has other "
           "consumers, which then read the integers";
  }
  RootOps roots() const override { return RootOps::Of({Op::QuantizeLinear}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    int p = -1, dq = -1;
    if (auto why = QdqPairProblem(g, anchor, &p, &dq); !why.empty()) return NoMatch(why);
    const std::string& v = g.nodes[size_t(dq)].output;
    if (g.IsGraphOutput(v)) return NoMatch("DQ output is a graph output");
    if (SoleUseProblem(g, v, anchor).empty()) return NoMatch("DQ output has no other use");
    return MakeMatch({p, dq, anchor});
  }

  void Apply(Found m, Rewriter& rw) const override {
    // The merged producer stays at P's place (the DQ's other consumers may precede the Q).
    Node merged = rw.node(m.nodes[0]);
    const std::string dq_out = rw.node(m.nodes[1]).output;
    merged.output = rw.node(m.nodes[2]).output;
    rw.ReplaceNode(m.nodes[0], merged);
    rw.EraseNode(m.nodes[1]);
    rw.EraseNode(m.nodes[2]);
    rw.ReplaceAllUsesWith(dq_out, merged.output);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeFaultRequantizeFanOut() { return std::make_unique<RequantizeFanOut>(); }

}  // namespace fusefuzz
