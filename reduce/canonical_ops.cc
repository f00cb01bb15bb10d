// Pass "canonical-ops": replaces an op by a plainer one of its kind (CaseSize::ops): an
// activation (a node or a FusedConv/Gemm epilogue step) by Relu (mode "relu"), any other
// activation but Clip and Relu6 by Clip(0, 6) (mode "clip": a bug in how an engine clamps,
// drawn behind HardSigmoid, HardSwish or Clip, then signs as one), a Relu6 by the Clip(0, 6) it
// is (mode "relu6-clip"), and drops a non-add epilogue step (mode "drop-step").
// Kept only when the case still fails the same way, so a bug that needs its Relu6, its Sigmoid
// or its epilogue keeps them; one that does not is minimized to the same ops whichever the
// generator drew (one finding folder instead of one per activation, docs/minimizer.md).
#include <utility>
#include <vector>

#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

enum Mode { kRelu = 0, kClip = 1, kRelu6Clip = 2, kDropStep = 3 };

// One opportunity: node `node`, and `step` in its epilogue (-1: the node itself).
struct Site {
  size_t node;
  int step;
};

bool StepEligible(const EpilogueStep& s, int mode) {
  switch (mode) {
    case kRelu:
      return (s.kind == EpilogueKind::kActivation && s.act != Op::Relu) ||
             s.kind == EpilogueKind::kClamp;
    case kClip:
      return s.kind == EpilogueKind::kActivation && s.act != Op::Relu && s.act != Op::Relu6 &&
             s.act != Op::Clip;
    case kRelu6Clip:
      return s.kind == EpilogueKind::kActivation && s.act == Op::Relu6;
    case kDropStep:
      // An add step owns an input: dropping it is the bypass of a residual, not an op change.
      return s.kind != EpilogueKind::kAdd;
    default:
      return false;
  }
}

bool NodeEligible(const Node& n, int mode) {
  if (!IsActivation(n.op) || !n.quant.empty()) return false;
  switch (mode) {
    case kRelu:
      return n.op != Op::Relu;
    case kClip:
      return n.op != Op::Relu && n.op != Op::Relu6 && n.op != Op::Clip;
    case kRelu6Clip:
      return n.op == Op::Relu6;
    default:
      return false;
  }
}

std::vector<Site> Sites(const Graph& g, int mode) {
  std::vector<Site> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (NodeEligible(n, mode)) out.push_back({i, -1});
    if (!n.quant.empty()) continue;  // a quantized epilogue is the integer kernel's contract
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      if (StepEligible(n.epilogue[k], mode)) out.push_back({i, static_cast<int>(k)});
    }
  }
  return out;
}

AttrMap ClipAttrs(double lo, double hi) {
  AttrMap a;
  a["min"] = lo;
  a["max"] = hi;
  return a;
}

class CanonicalOpsPass final : public ReducePass {
 public:
  std::string_view name() const override { return "canonical-ops"; }
  int modes() const override { return 4; }
  std::string mode_name(int mode) const override {
    switch (mode) {
      case kRelu:
        return "relu";
      case kClip:
        return "clip";
      case kRelu6Clip:
        return "relu6-clip";
      default:
        return "drop-step";
    }
  }
  int64_t Targets(ReduceContext& ctx, int mode) const override {
    return static_cast<int64_t>(Sites(ctx.current().graph, mode).size());
  }
  std::optional<ReduceCase> Apply(ReduceContext& ctx, int mode, int64_t begin,
                                  int64_t end) const override {
    const std::vector<Site> sites = Sites(ctx.current().graph, mode);
    ReduceCase c = ctx.current();
    // Backwards, so that dropping a step leaves the indexes of earlier sites valid.
    for (int64_t t = end - 1; t >= begin; --t) {
      const Site& s = sites[static_cast<size_t>(t)];
      Node& n = c.graph.nodes[s.node];
      if (s.step < 0) {
        n.op = mode == kRelu ? Op::Relu : Op::Clip;
        n.attrs = mode == kRelu ? AttrMap{} : ClipAttrs(0, 6);
        n.params.clear();
        continue;
      }
      auto step = n.epilogue.begin() + s.step;
      if (mode == kDropStep) {
        n.epilogue.erase(step);
      } else if (mode == kRelu) {
        *step = EpilogueStep{};  // an activation step, Relu
      } else {
        step->kind = EpilogueKind::kClamp;
        step->attrs = ClipAttrs(0, 6);
        step->params.clear();
      }
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeCanonicalOpsPass() { return std::make_unique<CanonicalOpsPass>(); }

}  // namespace fusefuzz
