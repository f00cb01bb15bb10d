// Pass "attr-values": float attributes (Clip bounds, LeakyRelu/Elu/HardSigmoid parameters, norm
// epsilons, the Pad fill value) along the element steps of the value ladder: to 0, to +-1, to
// the nearest power of two, to two significant bits. Invalid results (an
// epsilon the verifier refuses) fail verification and cost no query. A Clip keeps min < max: a
// Clip(0, 0) is a constant whose output tells the oracle nothing, so a case that reached it
// needs another output to stay informative (an exposed conv output that can then never go),
// where Clip(0, 1) needs none.
#include <variant>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

struct AttrTarget {
  size_t node;
  std::string attr;
};

// Would setting `attr` of `n` to `to` keep a Clip's min below its max? (Other attrs: yes.)
bool KeepsClipOpen(const Node& n, const std::string& attr, double to) {
  if (n.op != Op::Clip || (attr != "min" && attr != "max")) return true;
  const std::string other = attr == "min" ? "max" : "min";
  auto it = n.attrs.find(other);
  if (it == n.attrs.end() || !std::holds_alternative<double>(it->second)) return true;
  const double o = std::get<double>(it->second);
  return attr == "min" ? to < o : o < to;
}

class AttrValuesPass final : public ReducePass {
 public:
  std::string_view name() const override { return "attr-values"; }
  int modes() const override { return 4; }
  std::string mode_name(int mode) const override {
    return std::string(ValueStepName(kValueSteps[mode]));
  }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Eligible(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<AttrTarget> eligible = Eligible(ctx.current().graph, mode);
    ReduceCase c = ctx.current();
    for (int64_t t = begin; t < end; ++t) {
      const AttrTarget& a = eligible[static_cast<size_t>(t)];
      Node& n = c.graph.nodes[a.node];
      AttrValue& v = n.attrs.at(a.attr);
      const double to = Simplify(static_cast<float>(std::get<double>(v)), kValueSteps[mode]);
      // The other bound may have moved in this chunk already (each alone was eligible).
      if (!KeepsClipOpen(n, a.attr, to)) continue;
      v = to;
    }
    return c;
  }

 private:
  static std::vector<AttrTarget> Eligible(const Graph& g, int mode) {
    std::vector<AttrTarget> out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& [name, v] : g.nodes[i].attrs) {
        const double* d = std::get_if<double>(&v);
        if (!d) continue;
        const auto f = static_cast<float>(*d);
        const float to = Simplify(f, kValueSteps[mode]);
        if (ValueCost(to) < ValueCost(f) && KeepsClipOpen(g.nodes[i], name, to))
          out.push_back({i, name});
      }
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeAttrValuesPass() { return std::make_unique<AttrValuesPass>(); }

}  // namespace fusefuzz
