// Pass "dilation": conv dilation to 1. The window shrinks from d*(k-1)+1 to k, so the pads
// lose (d-1)*(k-1) in total (split between the two sides, clamped at 0): a "same" conv keeps its
// output size.
#include "harness/reduce/geometry_util.h"
#include "harness/reduce/reduce.h"

namespace fusefuzz {
namespace {

class DilationPass final : public ReducePass {
 public:
  std::string_view name() const override { return "dilation"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      Node& n = c.graph.nodes[eligible[static_cast<size_t>(t)]];
      const ConvAttrs a = GetConvAttrs(n);
      const Shape& w = n.params.at("W").shape;
      const int64_t dil[2] = {a.dilation_h, a.dilation_w};
      std::vector<int64_t> pads = PadsOf(n);
      for (size_t d = 0; d < 2; ++d) {
        const int64_t lost = (dil[d] - 1) * (w[2 + d] - 1);
        pads[d] = ClampPad(pads[d] - lost / 2);
        pads[d + 2] = ClampPad(pads[d + 2] - (lost - lost / 2));
      }
      SetInts(n, "pads", pads);
      n.attrs.erase("dilations");
    }
    return c;
  }

 private:
  static std::vector<size_t> Eligible(const Graph& g) {
    std::vector<size_t> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!IsConv(n)) continue;
      const ConvAttrs a = GetConvAttrs(n);
      if (a.dilation_h > 1 || a.dilation_w > 1) out.push_back(i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeDilationPass() { return std::make_unique<DilationPass>(); }

}  // namespace fusefuzz
