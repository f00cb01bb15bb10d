// conv-bn-fold: Conv -> BatchNorm  =>  Conv with W' = W * s[m], B' = (B - mean) * s + beta,
// s = gamma / sqrt(var + eps). Per output channel, so any group count (depthwise with a channel
// multiplier included) is handled by the [M, C/group, kH, kW] layout alone.
#include <memory>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

struct Folded {
  Tensor w, b;
};

class ConvBnFold final : public TypedRule<Folded> {
 public:
  std::string_view name() const override { return "conv-bn-fold"; }
  std::string_view summary() const override {
    return "Conv -> BatchNorm => Conv with scaled weights and bias; conv output has no other "
           "consumer and is not a graph output; var + eps > 0; folded values finite in float32";
  }

  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& bn = g.nodes[static_cast<size_t>(anchor)];
    int p = ProducerOfInput(g, bn, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Conv) {
      return NoMatch("BatchNorm input is not produced by a Conv");
    }
    const Node& conv = g.nodes[size_t(p)];
    if (auto why = SoleUseProblem(g, conv.output, anchor); !why.empty()) return NoMatch(why);
    std::vector<double> s, t;
    if (auto why = BnAffine(bn, &s, &t); !why.empty()) return NoMatch(why);
    const Tensor& w = *FindParam(conv, "W");
    const int64_t m = w.shape[0];
    const int64_t per = w.size() / m;
    std::vector<double> b = ParamAsDouble(conv, "B");
    if (b.empty()) b.assign(size_t(m), 0.0);  // a conv without bias gets one
    std::vector<double> w2(w.data.size()), b2(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t k = 0; k < per; ++k) {
        w2[size_t(o * per + k)] = double(w.data[size_t(o * per + k)]) * s[size_t(o)];
      }
      // (B - mean) * s + beta, written as B * s + t with t = beta - mean * s.
      b2[size_t(o)] = b[size_t(o)] * s[size_t(o)] + t[size_t(o)];
    }
    Folded f;
    if (!ToFloat(w2, w.shape, &f.w) || !ToFloat(b2, {m}, &f.b)) {
      return NoMatch("folded weights or bias overflow float32");
    }
    return MakeMatch({p, anchor}, std::move(f));
  }

  void Apply(Found m, Rewriter& rw) const override {
    Folded& f = m.data;
    const int conv = m.nodes[0], bn = m.nodes[1];
    Node fused = rw.node(conv);
    fused.params["W"] = std::move(f.w);
    fused.params["B"] = std::move(f.b);
    fused.output = rw.node(bn).output;
    rw.ReplaceNode(bn, std::move(fused));
    rw.EraseNode(conv);
  }
};

}  // namespace

std::unique_ptr<Rule> MakeConvBnFold() { return std::make_unique<ConvBnFold>(); }

}  // namespace fusefuzz
