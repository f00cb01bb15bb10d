// mlir:int8's quantized chains run on integers (tosa_emitter.h): DequantizeLinear -> Conv [->
// Relu | Relu6 | Clip] -> QuantizeLinear as one integer conv (tosa_qconv.cc), and
// DequantizeLinear [-> Relu | Relu6 | Clip] -> QuantizeLinear as one RESCALE and an i8 CLAMP,
// where that is exact up to what the reference admits; else the float ops as before.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "targets/mlir/tosa_emitter.h"

namespace fusefuzz::mlir {
namespace {

std::string Where(const fusefuzz::Node& n) { return " (node '" + n.name + "')"; }

// An activation bound on y's grid as this pack's QuantizeLinear quantizes it (the declared
// reciprocal_multiply: round(fl(v * fl(1 / s))) + z); `none` for an infinite bound.
double QuantizedBound(double v, const QuantParams& qy, double none) {
  if (!std::isfinite(v)) return none;
  const float scaled = static_cast<float>(v) * (1.0f / static_cast<float>(qy.scale[0]));
  return std::clamp(std::nearbyint(double(scaled)) + double(qy.zero_point[0]), double(qy.qmin()),
                    double(qy.qmax()));
}

bool PerTensorPositive(const QuantParams& q) { return !q.PerAxis() && q.scale[0] > 0; }

}  // namespace

// DequantizeLinear -> Conv [-> Relu | Relu6 | Clip] -> QuantizeLinear, each value read only by
// the next, run as one integer conv where that is exact: a per-tensor DQ, weights exactly
// (q - z_w) s_w[m] on their declared int8 grid with one zero point, a per-tensor Q. The bias is
// rounded to int32 at s_x s_w[m], the deviation the reference admits for that fusion
// (docs/oracle.md, integer-grid term 3); everything else is the real-number chain.
void Emitter::FindQdqConvs() {
  std::map<std::string, const fusefuzz::Node*> producer;
  std::map<std::string, int> readers;
  for (const fusefuzz::Node& n : r_.graph.nodes) {
    producer[n.output] = &n;
    for (const std::string& i : n.inputs) ++readers[i];
  }
  for (const std::string& o : r_.graph.outputs) ++readers[o];
  auto only_reader = [&](const std::string& value) -> const fusefuzz::Node* {
    if (readers[value] != 1) return nullptr;
    for (const fusefuzz::Node& n : r_.graph.nodes) {
      if (std::find(n.inputs.begin(), n.inputs.end(), value) != n.inputs.end()) return &n;
    }
    return nullptr;
  };
  auto act_then_q = [&](const fusefuzz::Node* next, QdqConv* chain) {
    if (next && (next->op == Op::Relu || next->op == Op::Relu6 || next->op == Op::Clip)) {
      chain->act = next;
      next = only_reader(next->output);
    }
    if (!next || next->op != Op::QuantizeLinear || !PerTensorPositive(next->quant.at("y"))) {
      return false;
    }
    chain->q = next;
    return true;
  };
  for (const fusefuzz::Node& n : r_.graph.nodes) {
    QdqConv requant;
    requant.dq = &n;
    if (n.op == Op::DequantizeLinear && PerTensorPositive(n.quant.at("x")) &&
        act_then_q(only_reader(n.output), &requant)) {
      requants_[n.name] = requant;
    }
    if (n.op != Op::Conv || n.inputs.size() != 1 || !n.epilogue.empty() || !n.quant.count("W")) {
      continue;
    }
    auto p = producer.find(n.inputs[0]);
    if (p == producer.end() || p->second->op != Op::DequantizeLinear) continue;
    QdqConv chain;
    chain.dq = p->second;
    if (!PerTensorPositive(chain.dq->quant.at("x"))) continue;
    if (!act_then_q(only_reader(n.output), &chain)) continue;
    const QuantParams& qw = n.quant.at("W");
    const Tensor& w = n.params.at("W");
    const int64_t per = w.size() / w.shape[0];
    bool exact = qw.type == QuantType::kInt8 && (!qw.PerAxis() || qw.axis == 0);
    for (int64_t c = 0; exact && c < w.shape[0]; ++c) {
      const double s = qw.Scale(c), z = double(qw.ZeroPoint(c));
      exact = s > 0 && qw.ZeroPoint(c) == qw.zero_point[0];
      for (int64_t i = c * per; exact && i < (c + 1) * per; ++i) {
        const double v = double(w.data[size_t(i)]);
        const double q = std::nearbyint(v / s) + z;
        exact = q >= -128 && q <= 127 && (q - z) * s == v;  // both exact in double
        chain.w.weights.push_back(static_cast<float>(q));
      }
    }
    if (!exact) continue;
    chain.w.weight_zp = static_cast<int32_t>(qw.zero_point[0]);
    qdq_convs_[n.name] = chain;
  }
}

bool Emitter::RunQdqConv(const fusefuzz::Node& n) {
  auto it = qdq_convs_.find(n.name);
  if (it == qdq_convs_.end()) return false;
  const QdqConv& chain = it->second;
  const std::string where = Where(n);
  const QuantParams &qx = chain.dq->quant.at("x"), &qw = n.quant.at("W");
  const QuantParams& qy = chain.q->quant.at("y");
  const int64_t m = n.params.at("W").shape[0];
  std::vector<float> bias(size_t(m), 0.0f);
  std::vector<double> factors;
  const auto b = n.params.find("B");
  for (int64_t c = 0; c < m; ++c) {
    const double sb = qx.scale[0] * qw.Scale(c);  // as the reference's AdmitBiasRounding
    if (b != n.params.end()) {
      const double q = std::nearbyint(double(b->second.data[size_t(c)]) / sb);
      if (!(std::fabs(q) < 1 << 24)) return false;  // an integer the float holds exactly
      bias[size_t(c)] = static_cast<float>(q);
    }
    if (c == 0 || qw.PerAxis()) factors.push_back(sb / qy.scale[0]);
  }
  double lo = -INFINITY, hi = INFINITY;
  if (chain.act) std::tie(lo, hi) = ActivationBounds(chain.act->op, chain.act->attrs, where);
  // What RESCALE or the accumulator cannot say runs as the float chain instead.
  const std::string body = body_;
  const int next = next_;
  try {
    values_[chain.q->output] = IntegerConv(n, values_.at(chain.dq->inputs[0]), qx, chain.w, bias,
                                           factors, qy, QuantizedBound(lo, qy, double(qy.qmin())),
                                           QuantizedBound(hi, qy, double(qy.qmax())));
  } catch (const Unsupported&) {
    body_ = body;
    next_ = next;
    return false;
  }
  if (chain.act) done_.insert(chain.act->name);
  done_.insert(chain.q->name);
  return true;
}

// y = clamp(saturate(round((x - z_x) s_x / s_y) + z_y)): one RESCALE (its factor errs by
// 2^-31, inside the float32 quotient the reference admits) and the activation as an i8 CLAMP.
bool Emitter::RunRequant(const fusefuzz::Node& n) {
  auto it = requants_.find(n.name);
  if (it == requants_.end()) return false;
  const QdqConv& chain = it->second;
  const std::string where = Where(n);
  const QuantParams &qx = n.quant.at("x"), &qy = chain.q->quant.at("y");
  double lo = -INFINITY, hi = INFINITY;
  if (chain.act) std::tie(lo, hi) = ActivationBounds(chain.act->op, chain.act->attrs, where);
  const std::string body = body_;
  const int next = next_;
  try {
    int32_t zx = 0;
    const Val x8 = SignedInt8(values_.at(n.inputs[0]), qx, &zx);
    const int32_t offset = qy.type == QuantType::kUint8 ? 128 : 0;
    const Val y = Rescale(x8, {qx.scale[0] / qy.scale[0]}, zx,
                          static_cast<int32_t>(qy.zero_point[0]) - offset, "i8", 255, where);
    values_[chain.q->output] = FinishInt8(y, qy, QuantizedBound(lo, qy, double(qy.qmin())),
                                          QuantizedBound(hi, qy, double(qy.qmax())), where);
  } catch (const Unsupported&) {
    body_ = body;  // what RESCALE cannot say runs as the float chain
    next_ = next;
    return false;
  }
  if (chain.act) done_.insert(chain.act->name);
  done_.insert(chain.q->name);
  return true;
}

}  // namespace fusefuzz::mlir
