// Pass "fold-pad": Pad(constant +0) -> Conv/FusedConv, the Pad's output used by the conv alone,
// becomes the conv with the Pad's pads added to its own: exactly the same function, one node
// fewer. A bug about padding at the borders (a BN folded into a padded conv) then minimizes to
// one form whether the generator padded with a Pad node or with the conv's pads; a bug in the
// Pad fold itself (a reflect Pad, a non-zero fill) is not eligible or keeps its Pad.
#include <cmath>
#include <vector>

#include "reduce/geometry_util.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

// Indexes of the convs whose input 0 is such a Pad.
std::vector<size_t> Eligible(const Graph& g) {
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& conv = g.nodes[i];
    if (!IsConv(conv) || !conv.quant.empty() || conv.inputs.empty()) continue;
    const int p = g.ProducerIndex(conv.inputs[0]);
    if (p < 0) continue;
    const Node& pad = g.nodes[size_t(p)];
    if (pad.op != Op::Pad || AttrString(pad, "mode") != "constant") continue;
    const double v = AttrFloat(pad, "value");
    if (v != 0 || std::signbit(v)) continue;
    if (g.IsGraphOutput(pad.output) || g.Consumers(pad.output).size() != 1) continue;
    // The conv's other inputs (a residual) must not read the Pad: only input 0 is padded.
    bool only_input0 = true;
    for (size_t k = 1; k < conv.inputs.size(); ++k) only_input0 &= conv.inputs[k] != pad.output;
    if (only_input0 && PadsOf(pad).size() == 4 && PadsOf(conv).size() == 4) out.push_back(i);
  }
  return out;
}

class FoldPadPass final : public ReducePass {
 public:
  std::string_view name() const override { return "fold-pad"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph);
    ReduceCase c = ctx.current();
    Graph& g = c.graph;
    for (int64_t t = begin; t < end; ++t) {
      Node& conv = g.nodes[eligible[static_cast<size_t>(t)]];
      const Node& pad = g.nodes[size_t(g.ProducerIndex(conv.inputs[0]))];
      std::vector<int64_t> pads = PadsOf(conv);
      const std::vector<int64_t> extra = PadsOf(pad);
      for (size_t k = 0; k < 4; ++k) pads[k] += extra[k];
      SetInts(conv, "pads", std::move(pads));
      conv.inputs[0] = pad.inputs[0];  // the Pad dies in the engine's dead-code cleanup
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeFoldPadPass() { return std::make_unique<FoldPadPass>(); }

}  // namespace fusefuzz
