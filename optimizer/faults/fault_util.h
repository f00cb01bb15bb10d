// Helpers shared by the faults (optimizer/faults/): the Conv -> BN pattern and fold with knobs
// that reproduce the real bugs in its arithmetic. conv-bn-fold keeps its own arithmetic, so no
// knob can leak into it. Faults that are a rule minus one legality check (bn-before-padded-conv,
// sub-const-side, pad-mode-ignored, pool-nonmonotone) instead call the rule's pattern and
// rewrite helpers in optimizer/rules/pattern.h and leave that check out.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/rewriter.h"
#include "optimizer/rule.h"

namespace fusefuzz {

// Conv -> BatchNorm anchored at the BN: a plain Conv whose output the BN reads. With `sole_use`
// the conv output must have no other consumer and not be a graph output (what conv-bn-fold
// requires). Returns "" or the reason the pattern is absent.
struct ConvBnNodes {
  int conv = -1;
  int bn = -1;
};
std::string ConvBnProblem(const Graph& g, int anchor, bool sole_use, ConvBnNodes* out);

// The affine form y = x * s + t of an inference BatchNorm with epsilon left out (the eps-dropped
// bug): s = scale / sqrt(var). Returns "" or why (a var of 0 would divide by zero).
std::string BnAffineWithoutEps(const Node& bn, std::vector<double>* s, std::vector<double>* t);

// Folding a per-output-channel affine y = conv(x) * s[m] + t[m] into the conv:
// W'[m] = W[m] * s[m], B' = B * s + t. The knobs break it the way real optimizers did.
struct FoldKnobs {
  bool bias_not_scaled = false;  // B' = B + t
  bool in_group_index = false;   // W'[m] = W[m] * s[m % (M / group)]
};
struct FoldedParams {
  Tensor w;
  Tensor b;
};
// Returns "" or why the fold is refused (a folded value not finite in float32).
std::string FoldAffineIntoConv(const Node& conv, const std::vector<double>& s,
                               const std::vector<double>& t, const FoldKnobs& knobs,
                               FoldedParams* out);

// The conv-bn-fold rewrite: the folded conv takes the BN's place and output; the conv goes.
void ReplaceConvBnByFolded(Rewriter& rw, int conv, int bn, FoldedParams f);

// conv-bn-fold (same pattern and legality checks) computed with broken arithmetic: the shape of
// the faults that differ from it only in the numbers (bias-not-scaled, eps-dropped,
// groups-layout).
class ConvBnFoldFault : public TypedRule<FoldedParams> {
 public:
  RootOps roots() const override { return RootOps::Of({Op::BatchNorm}); }
  Result Match(const MatchContext& ctx, int anchor) const override;
  void Apply(Found match, Rewriter& rewriter) const override;

 protected:
  virtual FoldKnobs knobs() const = 0;
  virtual bool drop_eps() const { return false; }
};

// FusedConv epilogue steps.
EpilogueStep ScaleShiftStep(Tensor scale, Tensor shift);
EpilogueStep AddStep(int input);
// (ActivationStep, the activation of a node as a step: optimizer/rules/pattern.h.)

// `conv` as a FusedConv (a Conv gets an empty epilogue); name, inputs and output unchanged.
Node AsFusedConv(const Node& conv);

// The operand of a two-value binary node that is not `value` ("" when the node has a constant
// operand, or reads `value` on both sides).
std::string OtherOperand(const Node& binary, const std::string& value);

// "" when a value of shape `from` broadcasts to exactly `to` (an epilogue add operand).
std::string BroadcastProblem(const Shape& from, const Shape& to);

}  // namespace fusefuzz
