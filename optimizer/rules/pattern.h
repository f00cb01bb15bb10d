// Helpers shared by rules (and faults): legality checks that return the reason a pattern does not
// match ("" when it does), and folding arithmetic. Folds compute in double and round to float32
// once, as real optimizers fold in float or double; a fold whose float32 result is not finite is
// refused in Match.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "optimizer/rewriter.h"
#include "optimizer/rule.h"

namespace fusefuzz {

inline bool IsConvLike(Op op) { return op == Op::Conv || op == Op::FusedConv; }

// "" when `value` is used by exactly one node, `consumer`, exactly once, and is not a graph
// output; else the reason ("'c' has 2 consumers", "'c' is a graph output", ...).
std::string SoleUseProblem(const Graph& g, const std::string& value, int consumer);

// The producer of `n.inputs[input]`, or -1 (graph input / out of range).
int ProducerOfInput(const Graph& g, const Node& n, size_t input);

const Tensor* FindParam(const Node& n, const std::string& name);

// Output channels M of a Conv/FusedConv (W.shape[0]).
int64_t ConvOutChannels(const Node& conv);

// A constant operand that acts per output channel on an [N,M,H,W] value without changing its
// shape: all dims 1 (a scalar of any rank <= 4), or M at the channel axis under right-aligned
// broadcasting ([1,M,1,1], [M,1,1]). [M] is NOT per-channel: it aligns with W. On success fills
// `per_channel` with M values and returns "".
std::string ChannelConstProblem(const Tensor& c, int64_t m, std::vector<double>* per_channel);

// Per-channel affine form of an inference BatchNorm: y = x * s[c] + t[c],
// s = scale / sqrt(var + eps), t = bias - mean * s. Returns "" or why (var + eps == 0).
std::string BnAffine(const Node& bn, std::vector<double>* s, std::vector<double>* t);

// Rounds to float32 once; returns false when a value is not finite in float32.
bool ToFloat(const std::vector<double>& v, Shape shape, Tensor* out);

// The node's params as doubles (empty when absent).
std::vector<double> ParamAsDouble(const Node& n, const std::string& name);

// Shape of every value (VerifyGraph). Rules call it only after the cheap checks passed.
ShapeMap ValueShapes(const Graph& g);

}  // namespace fusefuzz

namespace fusefuzz {

// A binary node with one constant operand and one value operand produced by a plain Conv whose
// output has no other use: the shared front of conv-scale-fold and conv-shift-fold.
struct ConvConstBinary {
  int conv = -1;
  const Tensor* constant = nullptr;
  bool constant_is_b = false;   // the constant is operand B (right side)
  std::vector<double> channel;  // the constant expanded to the conv's M channels
};
std::string ConvConstBinaryProblem(const Graph& g, int anchor, ConvConstBinary* out);

}  // namespace fusefuzz

// Patterns whose rewrite a fault repeats with a legality check left out: the pattern and the
// arithmetic live here once, the legality checks stay in the rule, so a fault is its rule minus
// one check and nothing else.
namespace fusefuzz {

// BatchNorm -> Conv/FusedConv anchored at the conv (bn-conv-fold): the BN (index in *bn) whose
// output only the conv reads, as its input 0. Returns "" or why the pattern is absent.
std::string BnConvProblem(const Graph& g, int anchor, int* bn);
// BN y = x * s[c] + t[c] folded into the FOLLOWING conv: W'[m,c',k] = W[m,c',k] * s[c],
// B'[m] = B[m] + sum_{c',k} W[m,c',k] * t[c] with c = group(m) * C/group + c'. Exact only for
// a conv without padding (the caller checks). Returns "" or why (not finite in float32).
std::string FoldBnIntoConv(const Node& conv, const std::vector<double>& s,
                           const std::vector<double>& t, Tensor* w, Tensor* b);
// The conv reads the BN's input with the folded params; the BN goes.
void ReplaceBnConvByFolded(Rewriter& rw, int bn, int conv, Tensor w, Tensor b);

// Conv -> Add/Sub with a constant folded into the conv's bias: B'[m] = B[m] + sign * c[m] (a conv
// without bias gets one); the match of conv-shift-fold, match data the new bias (a Tensor), no
// match when it is not finite in float32.
MatchResultOf<Tensor> ConvBiasShiftMatch(const Graph& g, int anchor, const ConvConstBinary& cb,
                                         double sign);
// The conv, with `bias`, takes the binary node's place and output; the binary node goes.
void ReplaceBinaryByBiasedConv(Rewriter& rw, int conv, int binary, Tensor bias);

// Pad -> Conv/FusedConv anchored at the conv (pad-conv-fold): the Pad (index in *pad) whose
// output only the conv reads, as its input 0. Returns "" or why the pattern is absent.
std::string PadConvProblem(const Graph& g, int anchor, int* pad);
// The conv reads the Pad's input with its pads grown by the Pad's; the Pad goes.
std::vector<int64_t> SummedPads(const Node& pad, const Node& conv);
void FoldPadIntoConv(Rewriter& rw, int pad, int conv, std::vector<int64_t> pads);

// An activation node (Relu, Clip, PRelu, ...) as an epilogue step of a `host` op (FusedConv or
// Gemm), attrs and params kept. A PRelu slope (callers checked: per channel / per column, or a
// scalar) takes the epilogue's shape: [M, 1, 1] or [1] on a FusedConv, [N] or [1] on a Gemm.
EpilogueStep ActivationStep(const Node& act, Op host);
// The node `producer` (turned into op `host`) with `step` appended to its epilogue takes the
// place and output of `consumer`; `producer` is erased.
void AppendEpilogueStep(Rewriter& rw, int producer, int consumer, Op host, EpilogueStep step);

// Activation -> MaxPool anchored at the pool (pool-activation-reorder): the activation (index
// in *act) whose output only the pool reads. Returns "" or why the pattern is absent.
std::string ActivationMaxPoolProblem(const Graph& g, int anchor, int* act);
// MaxPool(act(x)) => act(MaxPool(x)), under the pool's output name.
void SwapActivationAndPool(Rewriter& rw, int act, int pool);

}  // namespace fusefuzz
