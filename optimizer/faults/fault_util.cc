#include "optimizer/faults/fault_util.h"

#include <cmath>

#include "ir/verifier.h"
#include "optimizer/rules/pattern.h"

namespace fusefuzz {

std::string ConvBnProblem(const Graph& g, int anchor, bool sole_use, ConvBnNodes* out) {
  const Node& bn = g.nodes[static_cast<size_t>(anchor)];
  if (bn.op != Op::BatchNorm) return "anchor is not a BatchNorm";
  const int p = ProducerOfInput(g, bn, 0);
  if (p < 0 || g.nodes[size_t(p)].op != Op::Conv)
    return "BatchNorm input is not produced by a Conv";
  const Node& conv = g.nodes[size_t(p)];
  if (sole_use) {
    if (auto why = SoleUseProblem(g, conv.output, anchor); !why.empty()) return why;
  }
  out->conv = p;
  out->bn = anchor;
  return "";
}

std::string BnAffineWithoutEps(const Node& bn, std::vector<double>* s, std::vector<double>* t) {
  std::vector<double> scale = ParamAsDouble(bn, "scale"), bias = ParamAsDouble(bn, "bias"),
                      mean = ParamAsDouble(bn, "mean"), var = ParamAsDouble(bn, "var");
  s->resize(scale.size());
  t->resize(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) {
    if (!(var[c] > 0)) {
      return "BatchNorm '" + bn.name + "' channel " + std::to_string(c) +
             " has var 0: without eps the fold would divide by zero";
    }
    (*s)[c] = scale[c] / std::sqrt(var[c]);
    (*t)[c] = bias[c] - mean[c] * (*s)[c];
  }
  return "";
}

std::string FoldAffineIntoConv(const Node& conv, const std::vector<double>& s,
                               const std::vector<double>& t, const FoldKnobs& knobs,
                               FoldedParams* out) {
  const Tensor& w = *FindParam(conv, "W");
  const int64_t m = w.shape[0];
  const int64_t per = w.size() / m;
  const int64_t m_per_group = m / GetConvAttrs(conv).group;
  std::vector<double> b = ParamAsDouble(conv, "B");
  if (b.empty()) b.assign(size_t(m), 0.0);
  std::vector<double> w2(w.data.size());
  std::vector<double> b2(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) {
    const size_t si = size_t(knobs.in_group_index ? o % m_per_group : o);
    for (int64_t k = 0; k < per; ++k) {
      w2[size_t(o * per + k)] = double(w.data[size_t(o * per + k)]) * s[si];
    }
    b2[size_t(o)] = knobs.bias_not_scaled ? b[size_t(o)] + t[size_t(o)]
                                          : b[size_t(o)] * s[size_t(o)] + t[size_t(o)];
  }
  if (!ToFloat(w2, w.shape, &out->w) || !ToFloat(b2, {m}, &out->b)) {
    return "folded weights or bias overflow float32";
  }
  return "";
}

void ReplaceConvBnByFolded(Rewriter& rw, int conv, int bn, FoldedParams f) {
  Node fused = rw.node(conv);
  fused.params["W"] = std::move(f.w);
  fused.params["B"] = std::move(f.b);
  fused.output = rw.node(bn).output;
  rw.ReplaceNode(bn, std::move(fused));
  rw.EraseNode(conv);
}

ConvBnFoldFault::Result ConvBnFoldFault::Match(const MatchContext& ctx, int anchor) const {
  const Graph& g = ctx.graph();
  ConvBnNodes cb;
  if (auto why = ConvBnProblem(g, anchor, true, &cb); !why.empty()) return NoMatch(why);
  const Node& bn = g.nodes[size_t(anchor)];
  std::vector<double> s, t;
  std::string why = drop_eps() ? BnAffineWithoutEps(bn, &s, &t) : BnAffine(bn, &s, &t);
  if (!why.empty()) return NoMatch(why);
  FoldedParams f;
  why = FoldAffineIntoConv(g.nodes[size_t(cb.conv)], s, t, knobs(), &f);
  if (!why.empty()) return NoMatch(why);
  return MakeMatch({cb.conv, anchor}, std::move(f));
}

void ConvBnFoldFault::Apply(Found m, Rewriter& rw) const {
  ReplaceConvBnByFolded(rw, m.nodes[0], m.nodes[1], std::move(m.data));
}

EpilogueStep ScaleShiftStep(Tensor scale, Tensor shift) {
  EpilogueStep s;
  s.kind = EpilogueKind::kScaleShift;
  s.params["scale"] = std::move(scale);
  s.params["shift"] = std::move(shift);
  return s;
}

EpilogueStep AddStep(int input) {
  EpilogueStep s;
  s.kind = EpilogueKind::kAdd;
  s.input = input;
  return s;
}

Node AsFusedConv(const Node& conv) {
  Node n = conv;
  n.op = Op::FusedConv;
  return n;
}

std::string OtherOperand(const Node& binary, const std::string& value) {
  if (binary.inputs.size() != 2) return "";
  if (binary.inputs[0] == value && binary.inputs[1] != value) return binary.inputs[1];
  if (binary.inputs[1] == value && binary.inputs[0] != value) return binary.inputs[0];
  return "";
}

std::string BroadcastProblem(const Shape& from, const Shape& to) {
  Shape b;
  if (!BroadcastShapes(to, from, &b) || b != to) {
    return "operand " + ShapeToString(from) + " does not broadcast to the conv output " +
           ShapeToString(to);
  }
  return "";
}

}  // namespace fusefuzz
