// Patterns and arithmetic shared by the quantized rules (optimizer/rules/quant/) and the faults
// that corrupt them (optimizer/faults/quant/): each legality check is a function returning ""
// or why not, so that a fault is its rule with one check left out and nothing else.
// Semantics of the ops: ir/quant.h and docs/quantization.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/quant.h"
#include "optimizer/rewriter.h"
#include "optimizer/rule.h"

namespace fusefuzz {

// The node's params for `role` (it must exist: the verifier requires the op's roles).
const QuantParams& QuantOf(const Node& n, const std::string& role);

// "" when input `input` of `n` holds integers of `type`: it is produced by a QuantizeLinear,
// QLinearConv or QLinearAdd whose "y" has that type, or it is a graph input (every run checks
// that an input read as integers holds integers of the reader's type: the reference and the
// engine refuse anything else). Looks through a constant Pad whose value is an integer of the
// type.
std::string QuantizedInputProblem(const Graph& g, const Node& n, size_t input, QuantType type);

// "" when every scale of q is > 0 (Q is then monotone non-decreasing in x).
std::string PositiveScaleProblem(const QuantParams& q, const std::string& what);

// "" when q is 8-bit, per tensor, with a positive scale (what QLinearConv/QLinearAdd accept).
std::string Int8PerTensorProblem(const QuantParams& q, const std::string& what);

// "" when the conv's weight is declared on an int8 grid with zero point 0, per tensor or axis 0,
// scales > 0.
std::string WeightGridProblemOf(const Node& conv);

// ---- quantize-activation-drop: act -> QuantizeLinear ----
// The activation's clamp [lo, hi] (Relu: [0, +inf], Relu6: [0, 6], Clip: its attrs); "" or why
// the node is not one of these.
std::string ActivationBounds(const Node& act, double* lo, double* hi);
// Q(clamp(x, lo, hi)) == clamp(Q(x), Q(lo), Q(hi)) for s > 0 (Q is monotone), so the clamp is
// a no-op after Q iff Q(lo) == qmin and Q(hi) == qmax, per channel: the half-step test, done by
// quantizing the bound exactly as QuantizeLinear does. "" or why not.
std::string LowerBoundExactProblem(const QuantParams& y, double lo);
std::string UpperBoundExactProblem(const QuantParams& y, double hi);
// The pattern: act (index in *act) with one consumer, the Q at `anchor`. "" or why absent.
std::string ActivationQuantizeProblem(const Graph& g, int anchor, int* act);
// The Q reads the activation's input; the activation goes.
void DropActivationBeforeQuantize(Rewriter& rw, int act, int q);

// ---- qdq-conv-fuse: DQ -> Conv [-> Relu/Relu6/Clip] -> Q ----
struct QConvParts {
  int dq = -1, conv = -1, act = -1;  // act -1: none
  bool erase_dq = false;             // the DQ has no other use
};
// The chain ending at the Q `anchor`: "" or why it is absent (including single use of the conv
// and activation outputs, no graph output between, the DQ's input holding integers, the x and
// y params 8-bit per tensor with positive scales, the conv's weight declared on an int8 grid
// with zero point 0 per tensor or per axis 0).
std::string QConvChainProblem(const Graph& g, int anchor, QConvParts* parts);
// "" when the conv's bias is absent or declared on the int32 grid of s_x * s_w[m] (each scale
// equal to float32(s_x * s_w[m])) with zero point 0.
std::string BiasGridProblem(const Node& conv, const QuantParams& x);
// The QLinearConv that replaces the chain: W and B as their integers (B's integers taken on its
// declared grid), the activation as the epilogue step.
Node MakeQLinearConv(const Graph& g, const QConvParts& parts, int anchor);
// Installs `fused` at the Q's position and erases the chain.
void ReplaceChainByQConv(Rewriter& rw, const QConvParts& parts, int anchor, Node fused);

// ---- qdq-add-fuse: DQ(a), DQ(b) -> Add [-> Relu] -> Q ----
struct QAddParts {
  int dq_a = -1, dq_b = -1, add = -1, relu = -1;
};
std::string QAddChainProblem(const Graph& g, int anchor, QAddParts* parts);
// The QLinearAdd with quant a, b from the DQs and y from `y`.
Node MakeQLinearAdd(const Graph& g, const QAddParts& parts, int anchor, const QuantParams& y);
void ReplaceChainByQAdd(Rewriter& rw, const QAddParts& parts, int anchor, Node fused);

// ---- qdq-pair-merge: P -> DQ -> Q with P producing integers ----
// The pattern: producer P (ProducesQuantized) -> DQ -> Q at `anchor`, with P's and the DQ's
// outputs used once and not graph outputs. "" or why absent.
std::string QdqPairProblem(const Graph& g, int anchor, int* producer, int* dq);

// ---- qdq-maxpool-fold: DQ -> MaxPool -> Q ----
std::string QdqMaxPoolProblem(const Graph& g, int anchor, int* dq, int* pool);
// MaxPool on the integers, under the Q's output name; the DQ and Q go.
void ReplaceByIntegerMaxPool(Rewriter& rw, int dq, int pool, int q);

// ---- pad-qconv-fold: Pad -> QLinearConv ----
// The Pad (index in *pad) of QLinearConv `anchor`'s input 0, constant mode, used once. "" or
// why absent.
std::string PadQConvProblem(const Graph& g, int anchor, int* pad);

}  // namespace fusefuzz

namespace fusefuzz {

// ---- qdq-conv-bn-fold: Conv (W on an int8 grid) -> BatchNorm ----
// The Conv (index in *conv) whose declared int8 weight grid (zero point 0, per tensor or axis 0)
// feeds only the BN at `anchor`. "" or why absent.
std::string QConvBnProblem(const Graph& g, int anchor, int* conv);
// How the folded weights get back onto a grid.
enum class Resnap {
  kScale,      // the rule: s_w'[m] = s_w[m] * |s[m]|, the integers keep their magnitude
  kStaleGrid,  // Paddle #31103: W * s re-rounded onto the OLD grid s_w
};
struct QBnFolded {
  Tensor w, b;
  QuantParams wq;
  std::optional<QuantParams> bq;  // the bias grid s_x * s_w', when the conv reads a DQ
};
// BN y = x * s[m] + t[m] folded into the conv and re-snapped: W' = s_w'[m] * q'[m, ...],
// B' = B * s + t re-rounded to the int32 grid float32(s_x * s_w'[m]) when the conv reads a
// per-tensor DQ (else kept in float, undeclared). "" or why not (s[m] == 0, a scale not a
// normal float32, an integer out of [-128, 127], a bias beyond 2^24 steps).
std::string FoldBnResnapped(const Graph& g, int conv, const std::vector<double>& s,
                            const std::vector<double>& t, Resnap mode, QBnFolded* out);
// The conv with the folded params and grids takes the BN's place and output.
void ReplaceBnByResnappedConv(Rewriter& rw, int conv, int bn, QBnFolded f);

}  // namespace fusefuzz
