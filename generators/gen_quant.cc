// The quantized generator: QDQ graphs shaped like a post-training-quantized network (issue 24).
// Each block reads a quantized value and ends in a calibrated QuantizeLinear:
//   conv     [Pad(v) on the integers] -> DQ -> Conv (W, B on grids) [-> BN] [-> act] -> Q,
//            or the same as one QLinearConv (as an imported QOperator model carries it)
//   add      DQ(a), DQ(b) -> Add [-> Relu] -> Q (a residual when b is an older value), or
//            QLinearAdd
//   maxpool  DQ -> MaxPool -> Q with the DQ's parameters (negative with allow_negative_scale)
//   act      DQ -> Relu / Relu6 / Clip -> Q (bounds near the range's edges)
//   requant  DQ -> Q, the same parameters (a pair to merge) or new ones
//   twin     two Conv -> BN chains with one weight (pytorch/ao #2795), added
// Which rule and which bug each block aims at: docs/generator.md "Quantized graphs".
#include "generators/gen_quant.h"

#include <algorithm>
#include <cmath>

#include "ir/error.h"

namespace fusefuzz::gen {
namespace {

class QuantGen {
 public:
  QuantGen(Builder& b) : b_(b), p_(b.cfg().quant) {}

  GeneratedCase Run();

 private:
  ChoiceSource& src() { return b_.src(); }
  bool Allowed(Op op) const { return b_.Allowed(op); }
  int64_t Budget() const { return target_ - b_.node_count(); }
  void SetQuant(const std::string& role, QuantParams q) {
    b_.graph().nodes.back().quant[role] = std::move(q);
  }
  QuantType PickType() {
    return src().Bool(p_.int8_activations) ? QuantType::kInt8 : QuantType::kUint8;
  }

  std::string Dq(const QValue& in) {
    // An existing DQ of the same value: its output fans out (requantize-fan-out, shared DQs).
    if (src().Bool(p_.share_dq)) {
      for (const Node& n : b_.graph().nodes) {
        if (n.op == Op::DequantizeLinear && n.inputs[0] == in.name && n.quant.at("x") == in.q) {
          return n.output;
        }
      }
    }
    std::string v = b_.AddNode(Op::DequantizeLinear, {in.name});
    SetQuant("x", in.q);
    return v;
  }
  QValue Q(const std::string& x, QuantParams q) {
    std::string v = b_.AddNode(Op::QuantizeLinear, {x});
    SetQuant("y", q);
    QValue out{v, std::move(q)};
    qvalues_.push_back(out);
    return out;
  }
  // Calibrated parameters for the float value `u` about to go through `act` and a Q.
  QuantParams Calibrate(const std::string& u, Op act, QuantType type) {
    return CalibrateQuant(b_, ReferenceValues(b_, u), {type, act});
  }
  // Relu, Relu6 or Clip; Identity for none (an optional trips g++ 12's maybe-uninitialized).
  Op PickAct() {
    std::vector<Op> acts;
    for (Op op : {Op::Relu, Op::Relu6, Op::Clip}) {
      if (Allowed(op)) acts.push_back(op);
    }
    if (acts.empty() || !src().Bool(p_.activation)) return Op::Identity;
    const double kW[] = {3, 2, 2};
    std::vector<double> w;
    for (Op op : acts) w.push_back(kW[op == Op::Relu ? 0 : op == Op::Relu6 ? 1 : 2]);
    return acts[src().Pick(w)];
  }
  // Clip bounds near the edges of y's range (within a step, ties at exactly half of one
  // included: ONNX Runtime #22580), else the generator's usual bounds.
  AttrMap ClipAttrs(const QuantParams& y) {
    const double s = y.scale[0], z = double(y.zero_point[0]);
    const double lo_edge = s * (double(y.qmin()) - z), hi_edge = s * (double(y.qmax()) - z);
    const double kOff[] = {-0.75, -0.5, -0.25, 0.25, 0.5, 0.75, 1.25, 0};
    double lo = lo_edge + s * kOff[src().Int(0, 7)];
    double hi = hi_edge - s * kOff[src().Int(0, 7)];
    if (!src().Bool(p_.clip_near_edge)) {
      lo = src().Uniform(lo_edge, 0.5 * (lo_edge + hi_edge));
      hi = src().Uniform(0.5 * (lo_edge + hi_edge), hi_edge);
    }
    if (!(lo < hi)) std::swap(lo, hi);
    AttrMap a;
    a["min"] = double(static_cast<float>(lo));
    a["max"] = double(static_cast<float>(hi));
    return a;
  }
  // The value a block reads: the newest, or an older one (a second consumer of that Q).
  QValue PickInput() {
    if (qvalues_.size() > 1 && src().Bool(p_.reuse_value)) {
      return qvalues_[size_t(src().Int(0, int64_t(qvalues_.size()) - 2))];
    }
    return qvalues_.back();
  }

  QValue ConvBlock(const QValue& in);
  QValue AddBlock(const QValue& in);
  QValue MaxPoolBlock(const QValue& in);
  QValue ActBlock(const QValue& in);
  QValue RequantBlock(const QValue& in);
  QValue TwinBlock(const QValue& in);
  std::string PadIntegers(const QValue& in);
  std::string PadReals(const std::string& dq, const QuantParams& x);
  AttrMap PadAttrs(double v);

  Builder& b_;
  const GenQuant& p_;
  int64_t target_ = 0;
  std::vector<QValue> qvalues_;
};

std::string QuantGen::PadIntegers(const QValue& in) {
  const int64_t z = in.q.zero_point[0];
  double v;
  if (src().Bool(p_.pad_zero_point)) {
    v = double(z);  // the only foldable value: the real 0
  } else if (src().Bool(p_.pad_zero)) {
    v = 0;  // the integer 0 (TVM #13364 when z != 0)
  } else {
    v = double(src().Int(in.q.qmin(), in.q.qmax()));  // another integer (TVM #11127)
  }
  return b_.AddNode(Op::Pad, {in.name}, PadAttrs(v));
}

// A float Pad between the DQ and the conv: the value on the grid (s * (k - z), 0 included) or
// off it. No quantized rule folds it; the float pad-conv-fold may (only a zero value).
std::string QuantGen::PadReals(const std::string& dq, const QuantParams& x) {
  const double s = x.scale[0];
  const int64_t z = x.zero_point[0];
  double v = 0;
  if (!src().Bool(p_.pad_zero)) {
    v = double(DequantizeOnnx(float(src().Int(x.qmin(), x.qmax())), float(s), z));
    if (src().Bool(0.5)) v = double(static_cast<float>(v + 0.37 * s));  // off the grid
  }
  return b_.AddNode(Op::Pad, {dq}, PadAttrs(v));
}

AttrMap QuantGen::PadAttrs(double v) {
  AttrMap a;
  a["pads"] = std::vector<int64_t>{src().Int(0, 2), src().Int(0, 2), src().Int(0, 2),
                                   std::max<int64_t>(1, src().Int(0, 2))};
  a["value"] = v;
  return a;
}

QValue QuantGen::ConvBlock(const QValue& in) {
  const size_t first = b_.graph().nodes.size();
  bool fresh_dq = true;
  std::string x = in.name;
  if (Allowed(Op::Pad) && in.q.axis < 0 && Budget() >= 4 && src().Bool(p_.pad)) {
    x = PadIntegers(in);
  }
  std::string dq;
  if (x == in.name) {
    const size_t before = b_.graph().nodes.size();
    dq = Dq(in);
    fresh_dq = b_.graph().nodes.size() > before;
  } else {
    dq = b_.AddNode(Op::DequantizeLinear, {x});
    SetQuant("x", in.q);
  }
  bool float_pad = false;
  if (Allowed(Op::Pad) && x == in.name && in.q.axis < 0 && Budget() >= 4 &&
      src().Bool(p_.pad_off_grid)) {
    dq = PadReals(dq, in.q);
    float_pad = true;
  }
  ConvOpts o;
  if (src().Bool(0.3)) o.same_shape = true;
  std::string c = b_.EmitConv(dq, o);
  SnapConvToGrids(b_, b_.graph().nodes.back(), in.q);
  const Node conv = b_.graph().nodes.back();
  std::string u = c;
  bool bn = false;
  if (Allowed(Op::BatchNorm) && Budget() >= 3 && src().Bool(p_.bn)) {
    u = b_.EmitBatchNorm(c);
    bn = true;
  }
  const Op act = Budget() >= 2 ? PickAct() : Op::Identity;
  const QuantType type = PickType();
  QuantParams y = Calibrate(u, act, type);
  AttrMap act_attrs;
  if (act == Op::Clip) act_attrs = ClipAttrs(y);
  // Written as one QLinearConv: only where that is exactly the chain (no BN, the bias on the
  // s_x * s_w grid, weights with zero point 0, a fresh per-tensor DQ).
  bool all_exact = true;  // the bias on float32(s_x * s_w[m]) with zero point 0, or none
  if (conv.params.count("B")) {
    all_exact = conv.quant.count("B") > 0;
  }
  if (all_exact && conv.params.count("B")) {
    const QuantParams& bq = conv.quant.at("B");
    const QuantParams& wq = conv.quant.at("W");
    for (size_t m = 0; m < bq.scale.size(); ++m) {
      all_exact &= bq.zero_point[m] == 0 &&
                   bq.scale[m] == double(static_cast<float>(in.q.scale[0] * wq.Scale(int64_t(m))));
    }
  }
  if (Allowed(Op::QLinearConv) && !bn && !float_pad && fresh_dq && in.q.axis < 0 && all_exact &&
      conv.quant.at("W").zero_point[0] == 0 && src().Bool(p_.qlinear)) {
    b_.RemoveNodesFrom(first + (x == in.name ? 0 : 1));  // keep the Pad
    Node f;
    f.op = Op::QLinearConv;
    f.attrs = conv.attrs;
    const QuantParams& wq = conv.quant.at("W");
    Tensor w = conv.params.at("W");
    const int64_t per = w.size() / w.shape[0];
    for (int64_t i = 0; i < w.size(); ++i) {
      int64_t q = 0;
      OnGrid(w.data[size_t(i)], wq.Scale(wq.PerAxis() ? i / per : 0), 0, QuantType::kInt8, &q);
      w.data[size_t(i)] = static_cast<float>(q);
    }
    ParamMap params = {{"W", w}};
    if (conv.params.count("B")) {
      const QuantParams& bq = conv.quant.at("B");
      Tensor bias = conv.params.at("B");
      for (int64_t m = 0; m < bias.size(); ++m) {
        int64_t q = 0;
        OnGrid(bias.data[size_t(m)], bq.Scale(m), 0, QuantType::kInt32, &q);
        bias.data[size_t(m)] = static_cast<float>(q);
      }
      params["B"] = bias;
    }
    std::vector<EpilogueStep> epi;
    if (act != Op::Identity) {
      EpilogueStep st;
      st.kind = EpilogueKind::kActivation;
      st.act = act;
      st.attrs = act_attrs;
      epi.push_back(st);
    }
    std::string v = b_.AddNode(Op::QLinearConv, {x}, f.attrs, std::move(params), std::move(epi));
    SetQuant("x", in.q);
    SetQuant("w", wq);
    SetQuant("y", y);
    QValue out{v, y};
    qvalues_.push_back(out);
    return out;
  }
  if (act != Op::Identity) u = b_.AddNode(act, {u}, act_attrs);
  return Q(u, y);
}

QValue QuantGen::AddBlock(const QValue& in) {
  const Shape& s = b_.ShapeOf(in.name);
  // The other operand: an older quantized value of the same shape (a residual), else a conv
  // block of the same shape on `in` (two branches joined).
  std::vector<QValue> same;
  for (const QValue& v : qvalues_) {
    if (v.name != in.name && v.q.axis < 0 && v.q.scale[0] > 0 && b_.ShapeOf(v.name) == s) {
      same.push_back(v);
    }
  }
  QValue other;
  if (!same.empty() && src().Bool(0.7)) {
    other = same[size_t(src().Int(0, int64_t(same.size()) - 1))];
  } else {
    other = in;  // x + x: still two DQs (or one shared)
  }
  const bool relu = Allowed(Op::Relu) && Budget() >= 5 && src().Bool(0.6);
  const QuantType type = PickType();
  if (Allowed(Op::QLinearAdd) && in.q.axis < 0 && other.q.axis < 0 && src().Bool(p_.qlinear)) {
    // Calibrate on a scratch DQ -> Add [-> Relu] chain, then write the one op.
    const size_t first = b_.graph().nodes.size();
    std::string a = b_.AddNode(Op::DequantizeLinear, {in.name});
    SetQuant("x", in.q);
    std::string c = b_.AddNode(Op::DequantizeLinear, {other.name});
    SetQuant("x", other.q);
    std::string sum = b_.AddNode(Op::Add, {a, c});
    QuantParams y = Calibrate(sum, relu ? Op::Relu : Op::Identity, type);
    b_.RemoveNodesFrom(first);
    AttrMap at;
    at["activation"] = std::string(relu ? "relu" : "none");
    std::string v = b_.AddNode(Op::QLinearAdd, {in.name, other.name}, std::move(at));
    SetQuant("a", in.q);
    SetQuant("b", other.q);
    SetQuant("y", y);
    QValue out{v, y};
    qvalues_.push_back(out);
    return out;
  }
  std::string a = Dq(in);
  std::string c = Dq(other);
  std::string sum = src().Bool(0.5) ? b_.AddNode(Op::Add, {a, c}) : b_.AddNode(Op::Add, {c, a});
  QuantParams y = Calibrate(sum, relu ? Op::Relu : Op::Identity, type);
  if (relu && src().Bool(p_.add_fan_out)) {
    // The sum also quantized before the Relu: the Add has a second user, so Add + Relu must not
    // be fused into one quantized op (the founding class of quantized add-relu bugs).
    Q(sum, Calibrate(sum, Op::Identity, type));
  }
  if (relu) sum = b_.AddNode(Op::Relu, {sum});
  return Q(sum, y);
}

QValue QuantGen::MaxPoolBlock(const QValue& in) {
  QuantParams dqp = in.q;
  // ONNX Runtime #21176: DQ -> MaxPool -> Q with a negative scale. The integers are the same;
  // the DQ reads them reversed.
  if (p_.allow_negative_scale && dqp.axis < 0 && src().Bool(p_.negative_scale)) {
    dqp.scale[0] = -dqp.scale[0];
    b_.graph().options.allow_negative_scale = true;  // also for the calibration runs
  }
  std::string d = b_.AddNode(Op::DequantizeLinear, {in.name});
  SetQuant("x", dqp);
  std::string m = b_.EmitPool(Op::MaxPool, d);
  QuantParams y = dqp;
  // Bool(1 - p): the choice stream of the hard-coded 0.75 it replaced.
  if (dqp.scale[0] > 0 && !src().Bool(1 - p_.maxpool_new_params)) {
    y = Calibrate(m, Op::Identity, in.q.type);
  }
  return Q(m, y);
}

QValue QuantGen::ActBlock(const QValue& in) {
  Op act = Op::Identity;
  for (int i = 0; i < 4 && act == Op::Identity; ++i) act = PickAct();
  if (act == Op::Identity) return RequantBlock(in);
  std::string d = Dq(in);
  QuantParams y = in.q;
  // No choice drawn at the default 1: the choice stream of before the key existed.
  if (p_.act_new_params >= 1 || src().Bool(p_.act_new_params)) {
    const QuantType type = PickType();
    y = Calibrate(d, act, type);
  }
  AttrMap at;
  if (act == Op::Clip) at = ClipAttrs(y);
  std::string a = b_.AddNode(act, {d}, std::move(at));
  return Q(a, y);
}

QValue QuantGen::RequantBlock(const QValue& in) {
  std::string d = Dq(in);
  QuantParams y = in.q;
  if (in.q.scale[0] < 0 || src().Bool(p_.requant_new_params)) {
    y = Calibrate(d, Op::Identity, PickType());
    const Shape& s = b_.ShapeOf(d);
    if (s.size() == 4 && s[1] > 1 && src().Bool(p_.per_axis_activation)) {
      // Per channel along axis 1: each channel its own scale around the calibrated one.
      QuantParams pa = y;
      pa.axis = 1;
      pa.scale.clear();
      pa.zero_point.clear();
      for (int64_t c = 0; c < s[1]; ++c) {
        pa.scale.push_back(static_cast<float>(y.scale[0] * src().Uniform(0.5, 2)));
        pa.zero_point.push_back(y.zero_point[0]);
      }
      y = pa;
    }
  }
  return Q(d, y);
}

QValue QuantGen::TwinBlock(const QValue& in) {
  std::string d = Dq(in);
  std::string c1 = b_.EmitConv(d);
  SnapConvToGrids(b_, b_.graph().nodes.back(), in.q);
  const Node conv = b_.graph().nodes.back();
  std::string c2 = b_.AddNode(Op::Conv, {d}, conv.attrs, conv.params);
  b_.graph().nodes.back().quant = conv.quant;  // the same declared weight
  std::string y1 = b_.EmitBatchNorm(c1), y2 = b_.EmitBatchNorm(c2);
  QValue q1 = Q(y1, Calibrate(y1, Op::Identity, PickType()));
  Q(y2, Calibrate(y2, Op::Identity, PickType()));
  return q1;
}

GeneratedCase QuantGen::Run() {
  const GenLimits& lim = b_.cfg().limits;
  if (!Allowed(Op::QuantizeLinear) || !Allowed(Op::DequantizeLinear)) {
    throw InputError("generator config",
                     "--quant needs QuantizeLinear and DequantizeLinear among the allowed ops "
                     "(the target does not declare them)");
  }
  // Quantized blocks take 2-6 nodes: at least 4 nodes besides the input's Q.
  target_ = src().Int(std::max<int64_t>(lim.min_nodes, std::min<int64_t>(4, lim.max_nodes)),
                      lim.max_nodes);
  Shape shape = {
      1, src().Int(1, std::min<int64_t>(8, lim.max_channels)),
      src().Int(std::min<int64_t>(3, lim.max_spatial), std::min<int64_t>(10, lim.max_spatial)), 0};
  shape[3] = src().Bool(0.75) ? shape[2] : src().Int(1, std::min<int64_t>(10, lim.max_spatial));
  if (lim.max_batch > 1 && src().Bool(0.2)) shape[0] = 2;
  std::string x = b_.AddInput(shape);
  Q(x, Calibrate(x, Op::Identity, PickType()));

  const bool conv_ok = Allowed(Op::Conv);
  const bool pool_ok = Allowed(Op::MaxPool);
  const bool add_ok = Allowed(Op::Add) || Allowed(Op::QLinearAdd);
  const bool bn_ok = Allowed(Op::BatchNorm);
  while (Budget() >= 2) {
    const int64_t budget = Budget();
    const double w[] = {conv_ok && budget >= 3 ? p_.conv_weight : 0.0,
                        add_ok && budget >= 4 ? p_.add_weight : 0.0,
                        pool_ok && budget >= 3 ? p_.maxpool_weight : 0.0,
                        budget >= 3 ? p_.act_weight : 0.0,
                        p_.requant_weight,
                        conv_ok && bn_ok && budget >= 7 ? p_.twin_weight : 0.0};
    double total = 0;
    for (double v : w) total += v;
    if (!(total > 0)) break;
    const QValue in = PickInput();
    size_t block = src().Pick(w);
    // A negative scale (after a negative-scale MaxPool) is requantized before a conv, an add or
    // a twin: the integer ops and the bias grids need s > 0.
    if (in.q.scale[0] < 0 && (block == 0 || block == 1 || block == 5)) block = 4;
    switch (block) {
      case 0:
        ConvBlock(in);
        break;
      case 1:
        AddBlock(in);
        break;
      case 2:
        MaxPoolBlock(in);
        break;
      case 3:
        ActBlock(in);
        break;
      case 4:
        RequantBlock(in);
        break;
      default:
        TwinBlock(in);
    }
  }

  Graph& g = b_.graph();
  std::vector<std::string> outs;
  auto add_out = [&](const std::string& v) {
    if (int64_t(outs.size()) < lim.max_outputs &&
        std::find(outs.begin(), outs.end(), v) == outs.end())
      outs.push_back(v);
  };
  std::string last = qvalues_.back().name;
  if (Budget() >= 1 && src().Bool(p_.float_output)) {
    last = b_.AddNode(Op::DequantizeLinear, {last});
    SetQuant("x", qvalues_.back().q);
  }
  add_out(last);
  for (const auto& n : g.nodes) {
    if (g.Consumers(n.output).empty()) add_out(n.output);
  }
  if (qvalues_.size() > 2 && src().Bool(p_.intermediate_output)) {
    add_out(qvalues_[size_t(src().Int(1, int64_t(qvalues_.size()) - 2))].name);
  }
  // Unused values beyond max_outputs: dropped with the nodes that only they need.
  g.outputs = outs;
  b_.PruneDeadNodes();
  GeneratedCase c;
  c.graph = std::move(g);
  c.inputs = std::move(b_.inputs());
  return c;
}

}  // namespace

GeneratedCase GenerateQuantized(ChoiceSource& source, const GenConfig& cfg) {
  Builder b(source, cfg);
  return QuantGen(b).Run();
}

}  // namespace fusefuzz::gen
