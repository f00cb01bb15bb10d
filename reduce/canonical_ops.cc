// Pass "canonical-ops": replaces an op by a plainer one of its kind (CaseSize::ops): an
// activation (a node or a FusedConv/Gemm epilogue step) by Relu (mode "relu"), any other
// activation but Clip and Relu6 by Clip(0, 0.5) (mode "clip": a bug in how an engine clamps,
// drawn behind HardSigmoid, HardSwish or Clip, then signs as one), a Relu6 by the Clip(0, 6) it
// is (mode "relu6-clip"), and drops an epilogue step (mode "drop-step"; an add step with its
// operand).
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
      // An add step goes with its operand (the bypass of a fused residual): a clamp bug drawn
      // as FusedConv(Clip, Add) then signs as the Conv -> Clip it is.
      return true;
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

// A quantized conv's epilogue is its integer clamp: at most one activation step (Relu, Relu6 or
// Clip), last (ir/verifier_quant.cc). It may become Relu, go, or (a Relu6) the Clip(0, 6)
// activation it is, which keeps it an integer clamp; never a float clamp step, and its residual
// add stays (it has its own grid). So one QLinearConv bug drawn with Relu, Relu6 or Clip signs
// as one folder (ORT's u8s8 saturation came as four, QNNPACK's clamp bug as Relu6 and Clip).
bool QuantStepEligible(const EpilogueStep& s, int mode) {
  if (s.kind != EpilogueKind::kActivation) return false;
  return mode == kDropStep || (mode == kRelu && s.act != Op::Relu) ||
         (mode == kRelu6Clip && s.act == Op::Relu6);
}

std::vector<Site> Sites(const Graph& g, int mode) {
  std::vector<Site> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (NodeEligible(n, mode)) out.push_back({i, -1});
    if (!n.quant.empty()) {
      if (!n.epilogue.empty() && QuantStepEligible(n.epilogue.back(), mode)) {
        out.push_back({i, static_cast<int>(n.epilogue.size()) - 1});
      }
      continue;
    }
    for (size_t k = 0; k < n.epilogue.size(); ++k) {
      if (StepEligible(n.epilogue[k], mode)) out.push_back({i, static_cast<int>(k)});
    }
  }
  return out;
}

// After an add step reading input `input` went: that input goes too unless another add step
// reads it, and the later add steps' indexes follow.
void DropAddOperand(Node& n, int input) {
  for (const EpilogueStep& s : n.epilogue) {
    if (s.kind == EpilogueKind::kAdd && s.input == input) return;
  }
  if (input < 1 || static_cast<size_t>(input) >= n.inputs.size()) return;
  n.inputs.erase(n.inputs.begin() + input);
  for (EpilogueStep& s : n.epilogue) {
    if (s.kind == EpilogueKind::kAdd && s.input > input) --s.input;
  }
}

AttrMap ClipAttrs(double lo, double hi) {
  AttrMap a;
  a["min"] = lo;
  a["max"] = hi;
  return a;
}

// Relu6 is exactly Clip(0, 6). Any other activation becomes a Clip that bites where conv outputs
// usually lie (a HardSwish left unapplied at x = 1 gives 1 instead of 0.67; Clip(0, 6) would let
// 1 through and hide it); not Clip(0, 0), whose output is a constant that tells nothing.
AttrMap ClipBounds(int mode) { return mode == kRelu6Clip ? ClipAttrs(0, 6) : ClipAttrs(0, 0.5); }

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
        n.attrs = mode == kRelu ? AttrMap{} : ClipBounds(mode);
        n.params.clear();
        continue;
      }
      auto step = n.epilogue.begin() + s.step;
      if (mode == kDropStep) {
        const EpilogueStep dropped = *step;
        n.epilogue.erase(step);
        if (dropped.kind == EpilogueKind::kAdd) DropAddOperand(n, dropped.input);
      } else if (mode == kRelu) {
        *step = EpilogueStep{};  // an activation step, Relu
      } else if (!n.quant.empty()) {
        step->act = Op::Clip;  // relu6-clip on an integer clamp: still an activation step
        step->attrs = ClipBounds(mode);
      } else {
        step->kind = EpilogueKind::kClamp;
        step->attrs = ClipBounds(mode);
        step->params.clear();
      }
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<ReducePass> MakeCanonicalOpsPass() { return std::make_unique<CanonicalOpsPass>(); }

}  // namespace fusefuzz
