// pad-pool-fold: Pad(constant v) -> pool  =>  pool with pads increased by the Pad's.
// - AvgPool: only with count_include_pad = 1 (the Pad's values are counted in the divisor) and
//   v == +0 (pool pads are zeros).
// - MaxPool: pool pads count as -inf, the Pad's as v. Every window holds at least one real
//   element (pads < kernel), so they agree iff no real element is below v: accepted only when
//   the Pad's input is produced by an op whose outputs are >= v (Relu, Relu6, Sigmoid,
//   HardSigmoid: >= 0; Clip: >= min; a FusedConv whose last epilogue step is one of those or a
//   clamp). In general MaxPool is refused.
// In both cases the folded pads must stay < kernel and the output shape must not change (in
// ceil mode the last window's keep/drop rule depends on where the padding sits).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "optimizer/rewriter.h"
#include "optimizer/rules/pattern.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

// Clip's outputs are >= min, except when min > max: then every output is max (ONNX).
double ClipLowerBound(const AttrMap& attrs, const std::string& where) {
  return std::min(AttrFloat(Op::Clip, attrs, "min", where),
                  AttrFloat(Op::Clip, attrs, "max", where));
}

std::optional<double> ActLowerBound(Op op, const AttrMap& attrs, const std::string& where) {
  switch (op) {
    case Op::Relu:
    case Op::Relu6:
    case Op::Sigmoid:
    case Op::HardSigmoid:
      return 0.0;
    case Op::Clip:
      return ClipLowerBound(attrs, where);
    default:
      return std::nullopt;
  }
}

// Lower bound of every element of `value`, when one is known from its producer.
std::optional<double> LowerBound(const Graph& g, const std::string& value) {
  const Node* n = g.Producer(value);
  if (!n) return std::nullopt;
  if (n->op != Op::FusedConv) return ActLowerBound(n->op, n->attrs, n->name);
  if (n->epilogue.empty()) return std::nullopt;
  const EpilogueStep& last = n->epilogue.back();
  if (last.kind == EpilogueKind::kClamp) return ClipLowerBound(last.attrs, n->name);
  if (last.kind == EpilogueKind::kActivation) return ActLowerBound(last.act, last.attrs, n->name);
  return std::nullopt;
}

class PadPoolFold final : public TypedRule<std::vector<int64_t>> {
 public:
  std::string_view name() const override { return "pad-pool-fold"; }
  std::string_view summary() const override {
    return "Pad(constant) -> AvgPool(count_include_pad=1, value +0) or MaxPool(input known >= "
           "value) => pool with larger pads; folded pads < kernel; output shape unchanged; Pad "
           "output has no other consumer and is not a graph output";
  }

  RootOps roots() const override { return RootOps::Of({Op::MaxPool, Op::AvgPool}); }

  Result Match(const MatchContext& ctx, int anchor) const override {
    const Graph& g = ctx.graph();
    const Node& pool = g.nodes[static_cast<size_t>(anchor)];
    int p = ProducerOfInput(g, pool, 0);
    if (p < 0 || g.nodes[size_t(p)].op != Op::Pad) return NoMatch("pool input is not a Pad");
    const Node& pad = g.nodes[size_t(p)];
    if (AttrString(pad, "mode") != "constant") return NoMatch("Pad mode is not constant");
    if (auto why = SoleUseProblem(g, pad.output, anchor); !why.empty()) return NoMatch(why);
    const double v = AttrFloat(pad, "value");
    PoolAttrs a = GetPoolAttrs(pool);
    if (pool.op == Op::AvgPool) {
      if (!a.count_include_pad) {
        return NoMatch("AvgPool without count_include_pad would not count the padded values");
      }
      if (v != 0 || std::signbit(v)) return NoMatch("Pad value is not +0");
    } else {
      std::optional<double> lb = LowerBound(g, pad.inputs[0]);
      if (!lb) return NoMatch("MaxPool: Pad input has no known lower bound >= the pad value");
      if (!(*lb >= v)) return NoMatch("MaxPool: Pad input may be below the pad value");
    }
    std::vector<int64_t> pads = AttrInts(pool, "pads"), extra = AttrInts(pad, "pads");
    for (size_t i = 0; i < 4; ++i) pads[i] += extra[i];
    if (pads[0] >= a.kernel_h || pads[2] >= a.kernel_h || pads[1] >= a.kernel_w ||
        pads[3] >= a.kernel_w) {
      return NoMatch("folded pads would not be smaller than the kernel");
    }
    const Shape x = ctx.shapes().at(pad.inputs[0]);
    const auto& e = extra;
    const bool same_h = PoolOutputSize(x[2] + e[0] + e[2], a.kernel_h, a.stride_h, a.pad_top,
                                       a.pad_bottom, a.ceil_mode) ==
                        PoolOutputSize(x[2], a.kernel_h, a.stride_h, pads[0], pads[2], a.ceil_mode);
    const bool same_w = PoolOutputSize(x[3] + e[1] + e[3], a.kernel_w, a.stride_w, a.pad_left,
                                       a.pad_right, a.ceil_mode) ==
                        PoolOutputSize(x[3], a.kernel_w, a.stride_w, pads[1], pads[3], a.ceil_mode);
    if (!same_h || !same_w) return NoMatch("folding would change the pool output shape");
    return MakeMatch({p, anchor}, std::move(pads));
  }

  void Apply(Found m, Rewriter& rw) const override {
    const int pad = m.nodes[0], pool = m.nodes[1];
    rw.SetInput(pool, 0, rw.node(pad).inputs[0]);
    rw.SetAttr(pool, "pads", std::move(m.data));
    rw.EraseNode(pad);
  }
};

}  // namespace

std::unique_ptr<Rule> MakePadPoolFold() { return std::make_unique<PadPoolFold>(); }

}  // namespace fusefuzz
