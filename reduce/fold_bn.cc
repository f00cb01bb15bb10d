// Pass "fold-bn": Conv -> BatchNorm, the conv's output used by the BN alone, becomes one conv
// with the BN folded into its weights and bias (W*s, (B - mean)*s + bias, s = scale /
// sqrt(var + eps), in double, rounded once). The same function up to rounding, one node fewer:
// a bug that does not need the BN (a Relu6 bound lost after a Conv -> BN -> Relu6) is minimized
// to the Conv -> Relu6 that a case without BN gives; a bug in the BN fold itself needs the BN
// and keeps it (its replay no longer fails).
#include <cmath>
#include <vector>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

bool FoldableConv(const Node& n) {
  return (n.op == Op::Conv || (n.op == Op::FusedConv && n.epilogue.empty())) && n.quant.empty() &&
         n.inputs.size() == 1 && n.params.count("W") && n.params.at("W").shape.size() == 4;
}

// Indexes of the BatchNorm nodes that fold into their producer.
std::vector<size_t> Eligible(const Graph& g) {
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& bn = g.nodes[i];
    if (bn.op != Op::BatchNorm || bn.inputs.size() != 1 || !bn.quant.empty()) continue;
    const int p = g.ProducerIndex(bn.inputs[0]);
    if (p < 0 || !FoldableConv(g.nodes[size_t(p)])) continue;
    if (g.IsGraphOutput(bn.inputs[0]) || g.Consumers(bn.inputs[0]).size() != 1) continue;
    const int64_t m = g.nodes[size_t(p)].params.at("W").shape[0];
    bool shapes_ok = true;
    for (const char* name : {"scale", "bias", "mean", "var"}) {
      auto it = bn.params.find(name);
      shapes_ok = shapes_ok && it != bn.params.end() && it->second.size() == m;
    }
    if (shapes_ok) out.push_back(i);
  }
  return out;
}

class FoldBnPass final : public ReducePass {
 public:
  std::string_view name() const override { return "fold-bn"; }
  int64_t Targets(ReduceContext& ctx, int) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int, int64_t begin,
                                  int64_t end) const override {
    const std::vector<size_t> eligible = Eligible(ctx.current().graph);
    ReduceCase c = ctx.current();
    Graph& g = c.graph;
    std::vector<bool> drop(g.nodes.size(), false);
    for (int64_t t = begin; t < end; ++t) {
      const size_t b = eligible[static_cast<size_t>(t)];
      const Node& bn = g.nodes[b];
      Node& conv = g.nodes[size_t(g.ProducerIndex(bn.inputs[0]))];
      Tensor& w = conv.params.at("W");
      const int64_t m = w.shape[0], per = w.size() / m;
      auto bias = conv.params.find("B");
      const double eps = AttrFloat(bn, "epsilon");
      Tensor new_bias({m});
      for (int64_t o = 0; o < m; ++o) {
        const size_t k = static_cast<size_t>(o);
        const double s = bn.params.at("scale").data[k] /
                         std::sqrt(static_cast<double>(bn.params.at("var").data[k]) + eps);
        for (int64_t j = 0; j < per; ++j) {
          float& v = w.data[static_cast<size_t>(o * per + j)];
          v = static_cast<float>(v * s);
        }
        const double b0 = bias != conv.params.end() ? bias->second.data[k] : 0.0;
        new_bias.data[k] = static_cast<float>((b0 - bn.params.at("mean").data[k]) * s +
                                              bn.params.at("bias").data[k]);
      }
      conv.params["B"] = std::move(new_bias);
      // The conv takes the BN's output name: consumers and graph outputs stay wired.
      conv.output = bn.output;
      drop[b] = true;
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(kept);
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeFoldBnPass() { return std::make_unique<FoldBnPass>(); }

}  // namespace fusefuzz
