#include "optimizer/rules/quant/quant_pattern.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "optimizer/rules/pattern.h"

namespace fusefuzz {

const QuantParams& QuantOf(const Node& n, const std::string& role) { return n.quant.at(role); }

std::string QuantizedInputProblem(const Graph& g, const Node& n, size_t input, QuantType type) {
  const int p = ProducerOfInput(g, n, input);
  // A graph input read as integers holds integers of the type in every run: the reference and
  // the engine refuse anything else before computing (what a minimized case starts from).
  if (p < 0) return "";
  const Node& prod = g.nodes[size_t(p)];
  if (prod.op == Op::Pad) {
    // A constant Pad of integers by an integer in range still holds integers of that type.
    const double v = AttrFloat(prod, "value");
    if (AttrString(prod, "mode") == "constant" &&
        !(v == std::nearbyint(v) && v >= double(QMin(type)) && v <= double(QMax(type)))) {
      return "'" + n.inputs[input] + "' is padded with " + std::to_string(v) +
             ", not an integer of the type";
    }
    return QuantizedInputProblem(g, prod, 0, type);
  }
  if (!ProducesQuantized(prod.op)) {
    return "'" + n.inputs[input] + "' is produced by " + std::string(OpName(prod.op)) +
           ", not a quantized op";
  }
  if (QuantOf(prod, "y").type != type) {
    return "'" + n.inputs[input] + "' holds " +
           std::string(QuantTypeName(QuantOf(prod, "y").type)) + ", not " +
           std::string(QuantTypeName(type));
  }
  return "";
}

std::string PositiveScaleProblem(const QuantParams& q, const std::string& what) {
  for (double s : q.scale) {
    if (!(s > 0)) return what + " has a scale <= 0 (Q is then not monotone non-decreasing)";
  }
  return "";
}

std::string Int8PerTensorProblem(const QuantParams& q, const std::string& what) {
  if (q.type == QuantType::kInt32) return what + " is int32, not 8-bit";
  if (q.PerAxis()) return what + " is per axis, not per tensor";
  return PositiveScaleProblem(q, what);
}

// ---- quantize-activation-drop ----

std::string ActivationBounds(const Node& act, double* lo, double* hi) {
  switch (act.op) {
    case Op::Relu:
      *lo = 0, *hi = INFINITY;
      return "";
    case Op::Relu6:
      *lo = 0, *hi = 6;
      return "";
    case Op::Clip:
      *lo = AttrFloat(act, "min"), *hi = AttrFloat(act, "max");
      if (!(*lo <= *hi)) return "Clip min > max (or NaN): every output is max";
      return "";
    default:
      return std::string(OpName(act.op)) + " is not Relu, Relu6 or Clip";
  }
}

std::string LowerBoundExactProblem(const QuantParams& y, double lo) {
  for (size_t c = 0; c < y.scale.size(); ++c) {
    const float q = QuantizeOnnx(static_cast<float>(lo), static_cast<float>(y.scale[c]),
                                 y.zero_point[c], y.type);
    if (q != static_cast<float>(y.qmin())) {
      return "lower bound " + std::to_string(lo) + " quantizes to " + std::to_string(int64_t(q)) +
             " > qmin " + std::to_string(y.qmin()) + " (channel " + std::to_string(c) + ")";
    }
  }
  return "";
}

std::string UpperBoundExactProblem(const QuantParams& y, double hi) {
  for (size_t c = 0; c < y.scale.size(); ++c) {
    const float q = QuantizeOnnx(static_cast<float>(hi), static_cast<float>(y.scale[c]),
                                 y.zero_point[c], y.type);
    if (q != static_cast<float>(y.qmax())) {
      return "upper bound " + std::to_string(hi) + " quantizes to " + std::to_string(int64_t(q)) +
             " < qmax " + std::to_string(y.qmax()) + " (channel " + std::to_string(c) + ")";
    }
  }
  return "";
}

std::string ActivationQuantizeProblem(const Graph& g, int anchor, int* act) {
  const Node& q = g.nodes[size_t(anchor)];
  *act = ProducerOfInput(g, q, 0);
  if (*act < 0) return "Q input is a graph input";
  const Node& a = g.nodes[size_t(*act)];
  if (a.op != Op::Relu && a.op != Op::Relu6 && a.op != Op::Clip) {
    return "Q input is not produced by Relu, Relu6 or Clip";
  }
  return SoleUseProblem(g, a.output, anchor);
}

void DropActivationBeforeQuantize(Rewriter& rw, int act, int q) {
  rw.SetInput(q, 0, rw.node(act).inputs[0]);
  rw.EraseNode(act);
}

// ---- qdq-conv-fuse ----

std::string WeightGridProblemOf(const Node& conv) {
  auto it = conv.quant.find("W");
  if (it == conv.quant.end()) return "conv weight is not declared on an int8 grid";
  const QuantParams& w = it->second;
  if (w.type != QuantType::kInt8) return "conv weight grid is not int8";
  if (w.PerAxis() && w.axis != 0) return "conv weight grid is per axis " + std::to_string(w.axis);
  for (int64_t z : w.zero_point) {
    if (z != 0) return "conv weight grid has zero point " + std::to_string(z) + " != 0";
  }
  return PositiveScaleProblem(w, "conv weight grid");
}

namespace {

// The integers of a param declared on grid q (verified to be on it).
Tensor GridIntegers(const Tensor& t, const QuantParams& q) {
  Tensor out(t.shape);
  const int64_t per = q.PerAxis() ? t.size() / t.shape[0] : t.size();
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t c = q.PerAxis() ? i / per : 0;
    int64_t v = 0;
    OnGrid(t.data[size_t(i)], q.Scale(c), q.ZeroPoint(c), q.type, &v);
    out.data[size_t(i)] = static_cast<float>(v);
  }
  return out;
}

}  // namespace

std::string QConvChainProblem(const Graph& g, int anchor, QConvParts* parts) {
  const Node& q = g.nodes[size_t(anchor)];
  if (auto why = Int8PerTensorProblem(QuantOf(q, "y"), "Q 'y'"); !why.empty()) return why;
  int p = ProducerOfInput(g, q, 0);
  if (p < 0) return "Q input is a graph input";
  const Node* n = &g.nodes[size_t(p)];
  if (n->op == Op::Relu || n->op == Op::Relu6 || n->op == Op::Clip) {
    if (n->op == Op::Clip &&
        !(std::isfinite(AttrFloat(*n, "min")) && std::isfinite(AttrFloat(*n, "max")))) {
      return "Clip bounds are not finite";
    }
    if (auto why = SoleUseProblem(g, n->output, anchor); !why.empty()) return why;
    parts->act = p;
    p = ProducerOfInput(g, *n, 0);
    if (p < 0) return "activation input is a graph input";
    n = &g.nodes[size_t(p)];
  }
  if (n->op != Op::Conv) return "no plain Conv before the Q (and optional activation)";
  const int next = parts->act >= 0 ? parts->act : anchor;
  if (auto why = SoleUseProblem(g, n->output, next); !why.empty()) return why;
  parts->conv = p;
  if (auto why = WeightGridProblemOf(*n); !why.empty()) return why;
  const int d = ProducerOfInput(g, *n, 0);
  if (d < 0 || g.nodes[size_t(d)].op != Op::DequantizeLinear) {
    return "conv input is not produced by a DequantizeLinear";
  }
  const Node& dq = g.nodes[size_t(d)];
  const QuantParams& x = QuantOf(dq, "x");
  if (auto why = Int8PerTensorProblem(x, "DQ 'x'"); !why.empty()) return why;
  if (auto why = QuantizedInputProblem(g, dq, 0, x.type); !why.empty()) return why;
  parts->dq = d;
  parts->erase_dq = SoleUseProblem(g, dq.output, p).empty();
  return "";
}

std::string BiasGridProblem(const Node& conv, const QuantParams& x) {
  if (!conv.params.count("B")) return "";
  auto it = conv.quant.find("B");
  if (it == conv.quant.end()) return "conv bias is not declared on an int32 grid";
  const QuantParams& b = it->second;
  const QuantParams& w = QuantOf(conv, "W");
  if (b.type != QuantType::kInt32) return "conv bias grid is not int32";
  const int64_t m = ConvOutChannels(conv);
  for (int64_t c = 0; c < m; ++c) {
    if (b.ZeroPoint(c) != 0) return "conv bias grid has a zero point != 0";
    const double want = static_cast<float>(x.Scale(0) * w.Scale(c));
    if (b.Scale(c) != want) {
      return "conv bias grid scale " + std::to_string(b.Scale(c)) +
             " != s_x * s_w = " + std::to_string(want) + " (channel " + std::to_string(c) + ")";
    }
  }
  return "";
}

Node MakeQLinearConv(const Graph& g, const QConvParts& parts, int anchor) {
  const Node& conv = g.nodes[size_t(parts.conv)];
  const Node& dq = g.nodes[size_t(parts.dq)];
  const Node& q = g.nodes[size_t(anchor)];
  Node f;
  f.name = conv.name;
  f.op = Op::QLinearConv;
  f.inputs = {dq.inputs[0]};
  f.output = q.output;
  f.attrs = conv.attrs;
  f.params["W"] = GridIntegers(conv.params.at("W"), QuantOf(conv, "W"));
  if (conv.params.count("B")) f.params["B"] = GridIntegers(conv.params.at("B"), QuantOf(conv, "B"));
  f.quant["x"] = QuantOf(dq, "x");
  f.quant["w"] = QuantOf(conv, "W");
  f.quant["y"] = QuantOf(q, "y");
  if (parts.act >= 0) f.epilogue.push_back(ActivationStep(g.nodes[size_t(parts.act)], f.op));
  return f;
}

void ReplaceChainByQConv(Rewriter& rw, const QConvParts& parts, int anchor, Node fused) {
  rw.ReplaceNode(anchor, std::move(fused));
  if (parts.act >= 0) rw.EraseNode(parts.act);
  rw.EraseNode(parts.conv);
  if (parts.erase_dq) rw.EraseNode(parts.dq);
}

// ---- qdq-add-fuse ----

std::string QAddChainProblem(const Graph& g, int anchor, QAddParts* parts) {
  const Node& q = g.nodes[size_t(anchor)];
  if (auto why = Int8PerTensorProblem(QuantOf(q, "y"), "Q 'y'"); !why.empty()) return why;
  int p = ProducerOfInput(g, q, 0);
  if (p < 0) return "Q input is a graph input";
  if (g.nodes[size_t(p)].op == Op::Relu) {
    if (auto why = SoleUseProblem(g, g.nodes[size_t(p)].output, anchor); !why.empty()) return why;
    parts->relu = p;
    p = ProducerOfInput(g, g.nodes[size_t(p)], 0);
    if (p < 0) return "Relu input is a graph input";
  }
  const Node& add = g.nodes[size_t(p)];
  if (add.op != Op::Add) return "no Add before the Q (and optional Relu)";
  if (add.inputs.size() != 2 || !add.params.empty()) return "Add has a constant operand";
  if (auto why = SoleUseProblem(g, add.output, parts->relu >= 0 ? parts->relu : anchor);
      !why.empty()) {
    return why;
  }
  parts->add = p;
  int* dqs[2] = {&parts->dq_a, &parts->dq_b};
  for (size_t i = 0; i < 2; ++i) {
    const int d = ProducerOfInput(g, add, i);
    if (d < 0 || g.nodes[size_t(d)].op != Op::DequantizeLinear) {
      return "Add operand " + std::to_string(i) + " is not produced by a DequantizeLinear";
    }
    const Node& dq = g.nodes[size_t(d)];
    const QuantParams& x = QuantOf(dq, "x");
    if (auto why = Int8PerTensorProblem(x, "DQ 'x'"); !why.empty()) return why;
    if (auto why = QuantizedInputProblem(g, dq, 0, x.type); !why.empty()) return why;
    *dqs[i] = d;
  }
  return "";
}

Node MakeQLinearAdd(const Graph& g, const QAddParts& parts, int anchor, const QuantParams& y) {
  const Node& add = g.nodes[size_t(parts.add)];
  Node f;
  f.name = add.name;
  f.op = Op::QLinearAdd;
  f.inputs = {g.nodes[size_t(parts.dq_a)].inputs[0], g.nodes[size_t(parts.dq_b)].inputs[0]};
  f.output = g.nodes[size_t(anchor)].output;
  f.attrs["activation"] = std::string(parts.relu >= 0 ? "relu" : "none");
  f.quant["a"] = QuantOf(g.nodes[size_t(parts.dq_a)], "x");
  f.quant["b"] = QuantOf(g.nodes[size_t(parts.dq_b)], "x");
  f.quant["y"] = y;
  return f;
}

void ReplaceChainByQAdd(Rewriter& rw, const QAddParts& parts, int anchor, Node fused) {
  rw.ReplaceNode(anchor, std::move(fused));
  if (parts.relu >= 0) rw.EraseNode(parts.relu);
  rw.EraseNode(parts.add);
  // The DQs stay for their other uses; dead-node-elim removes them when they have none.
}

// ---- qdq-pair-merge ----

std::string QdqPairProblem(const Graph& g, int anchor, int* producer, int* dq) {
  const Node& q = g.nodes[size_t(anchor)];
  *dq = ProducerOfInput(g, q, 0);
  if (*dq < 0 || g.nodes[size_t(*dq)].op != Op::DequantizeLinear) {
    return "Q input is not produced by a DequantizeLinear";
  }
  const Node& d = g.nodes[size_t(*dq)];
  if (QuantOf(d, "x") != QuantOf(q, "y")) return "DQ and Q parameters differ";
  if (auto why = QuantizedInputProblem(g, d, 0, QuantOf(d, "x").type); !why.empty()) return why;
  *producer = ProducerOfInput(g, d, 0);
  if (*producer < 0) return "DQ reads a graph input: no producer to take the Q's output";
  if (auto why = SoleUseProblem(g, g.nodes[size_t(*producer)].output, *dq); !why.empty()) {
    return why;
  }
  return "";
}

// ---- qdq-maxpool-fold ----

std::string QdqMaxPoolProblem(const Graph& g, int anchor, int* dq, int* pool) {
  const Node& q = g.nodes[size_t(anchor)];
  *pool = ProducerOfInput(g, q, 0);
  if (*pool < 0 || g.nodes[size_t(*pool)].op != Op::MaxPool) {
    return "Q input is not produced by a MaxPool";
  }
  const Node& mp = g.nodes[size_t(*pool)];
  if (auto why = SoleUseProblem(g, mp.output, anchor); !why.empty()) return why;
  *dq = ProducerOfInput(g, mp, 0);
  if (*dq < 0 || g.nodes[size_t(*dq)].op != Op::DequantizeLinear) {
    return "MaxPool input is not produced by a DequantizeLinear";
  }
  const Node& d = g.nodes[size_t(*dq)];
  if (auto why = SoleUseProblem(g, d.output, *pool); !why.empty()) return why;
  const QuantParams& x = QuantOf(d, "x");
  if (x != QuantOf(q, "y")) return "DQ and Q parameters differ";
  // A per-axis scale must be constant within each pooling window: only the channel axis is.
  if (x.PerAxis() && x.axis != 1) return "per-axis parameters along a pooled axis";
  return QuantizedInputProblem(g, d, 0, x.type);
}

void ReplaceByIntegerMaxPool(Rewriter& rw, int dq, int pool, int q) {
  Node p = rw.node(pool);
  p.inputs = {rw.node(dq).inputs[0]};
  p.output = rw.node(q).output;
  rw.ReplaceNode(q, std::move(p));
  rw.EraseNode(pool);
  rw.EraseNode(dq);
}

// ---- pad-qdq-conv-fold ----

std::string PadQConvProblem(const Graph& g, int anchor, int* pad) {
  const Node& conv = g.nodes[size_t(anchor)];
  *pad = ProducerOfInput(g, conv, 0);
  if (*pad < 0 || g.nodes[size_t(*pad)].op != Op::Pad) return "QLinearConv input is not a Pad";
  const Node& p = g.nodes[size_t(*pad)];
  if (AttrString(p, "mode") != "constant") return "Pad mode is not constant";
  if (auto why = SoleUseProblem(g, p.output, anchor); !why.empty()) return why;
  return QuantizedInputProblem(g, p, 0, QuantOf(conv, "x").type);
}

}  // namespace fusefuzz

namespace fusefuzz {

std::string QConvBnProblem(const Graph& g, int anchor, int* conv) {
  const Node& bn = g.nodes[size_t(anchor)];
  *conv = ProducerOfInput(g, bn, 0);
  if (*conv < 0 || g.nodes[size_t(*conv)].op != Op::Conv) return "BN input is not a plain Conv";
  const Node& c = g.nodes[size_t(*conv)];
  if (auto why = WeightGridProblemOf(c); !why.empty()) return why;
  return SoleUseProblem(g, c.output, anchor);
}

std::string FoldBnResnapped(const Graph& g, int conv_index, const std::vector<double>& s,
                            const std::vector<double>& t, Resnap mode, QBnFolded* out) {
  const Node& conv = g.nodes[size_t(conv_index)];
  const QuantParams& wq = QuantOf(conv, "W");
  const Tensor& W = conv.params.at("W");
  const int64_t m = W.shape[0], per = W.size() / m;
  if (int64_t(s.size()) != m) return "BN channels != conv output channels";
  out->wq = wq;
  if (mode == Resnap::kScale) {
    out->wq.scale.clear();
    for (int64_t c = 0; c < m; ++c) {
      if (s[size_t(c)] == 0) return "BN scale 0 in channel " + std::to_string(c);
      const float ns = static_cast<float>(wq.Scale(c) * std::fabs(s[size_t(c)]));
      if (!(std::isfinite(ns) && std::fabs(ns) >= std::numeric_limits<float>::min())) {
        return "re-snapped weight scale not a normal float32 (channel " + std::to_string(c) + ")";
      }
      out->wq.scale.push_back(ns);
    }
    out->wq.zero_point.assign(size_t(m), 0);
    out->wq.axis = 0;
  }
  out->w = Tensor(W.shape);
  for (int64_t i = 0; i < W.size(); ++i) {
    const int64_t c = i / per;
    int64_t q = 0;
    OnGrid(W.data[size_t(i)], wq.Scale(c), 0, QuantType::kInt8, &q);
    double nq = 0;
    if (mode == Resnap::kScale) {
      nq = s[size_t(c)] < 0 ? -double(q) : double(q);
    } else {
      // Saturated onto the old grid, as a quantize op would.
      nq = std::nearbyint(double(W.data[size_t(i)]) * s[size_t(c)] / wq.Scale(c));
      nq = nq < -128 ? -128 : nq > 127 ? 127 : nq;
    }
    if (nq < -128 || nq > 127) return "re-snapped weight integer out of int8 range";
    out->w.data[size_t(i)] = static_cast<float>(out->wq.Scale(c) * nq);
  }
  std::vector<double> b(static_cast<size_t>(m));
  const std::vector<double> old = ParamAsDouble(conv, "B");
  for (int64_t c = 0; c < m; ++c) {
    b[size_t(c)] = (old.empty() ? 0.0 : old[size_t(c)]) * s[size_t(c)] + t[size_t(c)];
  }
  out->b = Tensor({m});
  const int d = ProducerOfInput(g, conv, 0);
  out->bq.reset();
  if (d >= 0 && g.nodes[size_t(d)].op == Op::DequantizeLinear &&
      !QuantOf(g.nodes[size_t(d)], "x").PerAxis()) {
    const double sx = QuantOf(g.nodes[size_t(d)], "x").Scale(0);
    QuantParams bq;
    bq.type = QuantType::kInt32;
    bq.scale.clear();
    bq.zero_point.assign(size_t(m), 0);
    bq.axis = 0;
    for (int64_t c = 0; c < m; ++c) {
      const float nb = static_cast<float>(sx * out->wq.Scale(c));
      if (!(std::isfinite(nb) && nb >= std::numeric_limits<float>::min())) {
        return "bias grid scale s_x * s_w' not a normal float32";
      }
      bq.scale.push_back(nb);
      const double qb = std::nearbyint(b[size_t(c)] / nb);
      if (!(std::fabs(qb) <= double(kMaxExactInt))) return "re-snapped bias beyond 2^24 steps";
      out->b.data[size_t(c)] = static_cast<float>(double(nb) * qb);
    }
    out->bq = bq;
  } else if (!ToFloat(b, {m}, &out->b)) {
    return "folded bias not finite in float32";
  }
  return "";
}

void ReplaceBnByResnappedConv(Rewriter& rw, int conv, int bn, QBnFolded f) {
  Node fused = rw.node(conv);
  fused.params["W"] = std::move(f.w);
  fused.params["B"] = std::move(f.b);
  fused.quant["W"] = std::move(f.wq);
  if (f.bq) {
    fused.quant["B"] = std::move(*f.bq);
  } else {
    fused.quant.erase("B");
  }
  fused.output = rw.node(bn).output;
  rw.ReplaceNode(bn, std::move(fused));
  rw.EraseNode(conv);
}

}  // namespace fusefuzz
