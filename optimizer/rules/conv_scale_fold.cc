// conv-scale-fold: Conv -> Mul by a per-channel or scalar constant (either side: Mul commutes),
// or Div by one (constant as divisor B only)  =>  Conv with W' = W * k[m], B' = B * k[m]
// (k = c or 1/c, computed as W / c in double).
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

struct Folded {
  Tensor w, b;
  bool has_b = false;
};

class ConvScaleFold final : public TypedRule<Folded> {
 public:
  std::string_view name() const override { return "conv-scale-fold"; }
  std::string_view summary() const override {
    return "Conv -> Mul(const) / Div(by const) => Conv with scaled weights and bias; constant is "
           "scalar or per-channel ([1,M,1,1], [M,1,1]; not [M]); Div only by a non-zero divisor "
           "B; conv output has no other consumer and is not a graph output; results finite";
  }

  RootOps roots() const override { return RootOps::Of({Op::Mul, Op::Div}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& n = g.nodes[static_cast<size_t>(anchor)];
    ConvConstBinary cb;
    if (auto why = ConvConstBinaryProblem(g, anchor, &cb); !why.empty()) return NoMatch(why);
    const bool div = n.op == Op::Div;
    if (div && !cb.constant_is_b) return NoMatch("Div with a constant dividend is not a scale");
    if (div) {
      for (double k : cb.channel) {
        if (k == 0) return NoMatch("Div by a constant with a zero entry");
      }
    }
    const Node& conv = g.nodes[size_t(cb.conv)];
    const Tensor& w = *FindParam(conv, "W");
    const int64_t m = w.shape[0], per = w.size() / m;
    std::vector<double> w2(w.data.size());
    for (int64_t o = 0; o < m; ++o) {
      const double k = cb.channel[size_t(o)];
      for (int64_t i = 0; i < per; ++i) {
        const double v = w.data[size_t(o * per + i)];
        w2[size_t(o * per + i)] = div ? v / k : v * k;
      }
    }
    Folded f;
    if (!ToFloat(w2, w.shape, &f.w)) return NoMatch("scaled weights overflow float32");
    std::vector<double> b = ParamAsDouble(conv, "B");
    if (!b.empty()) {
      for (int64_t o = 0; o < m; ++o) {
        const double k = cb.channel[size_t(o)];
        b[size_t(o)] = div ? b[size_t(o)] / k : b[size_t(o)] * k;
      }
      if (!ToFloat(b, {m}, &f.b)) return NoMatch("scaled bias overflows float32");
      f.has_b = true;
    }
    return MakeMatch({cb.conv, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    Folded& f = m.data;
    const int conv = m.nodes[0], op = m.nodes[1];
    Node fused = rw.node(conv);
    fused.params["W"] = std::move(f.w);
    if (f.has_b) fused.params["B"] = std::move(f.b);
    fused.output = rw.node(op).output;
    rw.ReplaceNode(op, std::move(fused));
    rw.EraseNode(conv);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeConvScaleFold() { return std::make_unique<ConvScaleFold>(); }

}  // namespace fusefuzz
