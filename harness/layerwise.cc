#include "harness/layerwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "kernels/reference/teacher_forced.h"
#include "oracles/grid.h"

namespace fusefuzz {
namespace {

bool IsBoundary(Op op) {
  return op == Op::QuantizeLinear || op == Op::QLinearConv || op == Op::QLinearAdd;
}

// A run's rewrites as "rule: node, node" lines, sorted: equal lists mean the same fusions.
std::vector<std::string> RewriteLines(const TargetResult& run) {
  std::vector<std::string> lines;
  for (const Rewrite& r : run.rewrites) {
    std::string line = r.rule;
    for (size_t i = 0; i < r.nodes.size(); ++i) line += (i == 0 ? ": " : ", ") + r.nodes[i];
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Channels and spatial positions of the failing elements of an NCHW (or [N, C, ...]) tensor.
void LocateFailures(const Shape& shape, const std::vector<int64_t>& bad, LayerCheck* l) {
  if (bad.empty()) return;
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  const int64_t channels = shape.size() >= 2 ? shape[1] : 1;
  std::set<int64_t> chans, positions;
  for (int64_t i : bad) {
    chans.insert((i / inner) % channels);
    positions.insert(((i / (inner * channels)) * inner) + i % inner);
  }
  l->failing_channels.assign(chans.begin(), chans.end());
  l->failing_positions = static_cast<int64_t>(positions.size());
}

LayerCheck JudgeInteger(const std::string& name, const RefTensor& ref, const Tensor& got,
                        bool sigma) {
  LayerCheck l;
  l.value = name;
  l.exposed = true;
  GridTally tally;
  JudgeGridOutput(name, ref, got, sigma, &tally);
  l.elements = tally.s.compared;
  l.informative = tally.s.informative;
  l.saturated = tally.s.saturated;
  l.failed = tally.s.failed;
  l.worst_excess = tally.s.excess;
  l.worst_e = tally.s.e;
  l.worst_index = tally.worst.index;
  l.worst_reference = tally.worst.reference;
  l.worst_candidate = tally.worst.candidate;
  l.where = tally.s.where;
  if (l.failed > 0) {
    const std::vector<double>& e = sigma && !ref.grid_es.empty() ? ref.grid_es : ref.grid_e;
    std::vector<int64_t> bad;
    for (size_t i = 0; i < ref.value.size(); ++i) {
      if (std::isnan(ref.grid_t[i])) continue;
      const double c = static_cast<double>(got.data[i]);
      const bool integral = std::isfinite(c) && c == std::nearbyint(c);
      if (!integral || GridExcess(c, ref.grid_t[i], e[i], ref.grid_qmin, ref.grid_qmax) > 0) {
        bad.push_back(static_cast<int64_t>(i));
      }
    }
    LocateFailures(ref.shape, bad, &l);
  }
  return l;
}

LayerCheck JudgeFloat(const Graph& g, const std::string& name, const RefTensorMap& ref,
                      const TensorMap& got, const OracleOptions& oracle) {
  LayerCheck l;
  l.value = name;
  l.integer = false;
  l.exposed = true;
  Graph one = g;
  one.outputs = {name};
  const OracleResult r = Compare(one, ref, got, oracle);
  l.elements = r.compared;
  l.informative = r.informative;
  l.failed = r.failed;
  const double limit = r.k > 0 ? r.k : 1;
  l.worst_excess = r.worst.ratio / limit;
  l.worst_index = r.worst.index;
  l.worst_reference = r.worst.reference;
  l.worst_candidate = r.worst.candidate;
  l.where = r.verdict == Verdict::kMismatch ? r.detail : "";
  return l;
}

// The model already answers these integers dequantized: a per-tensor DequantizeLinear of them is
// a graph output (a classifier's logits after PyTorch's DeQuantStub). Exposing them too would
// answer one value twice, which PyTorch's adapter refuses ("two graph outputs are one value of
// the float model"); their integers are read back from that output instead, exactly: (q - z) * s
// in float32 divided by s rounds back to q - z. Returns that DequantizeLinear, or nullptr.
const Node* AnsweredDequantized(const Graph& g, const std::string& v) {
  for (int c : g.Consumers(v)) {
    const Node& n = g.nodes[static_cast<size_t>(c)];
    auto x = n.quant.find("x");
    if (n.op == Op::DequantizeLinear && g.IsGraphOutput(n.output) && x != n.quant.end() &&
        !x->second.PerAxis()) {
      return &n;
    }
  }
  return nullptr;
}

Tensor IntegersOf(const Tensor& dequantized, const QuantParams& q) {
  Tensor t = dequantized;
  const double s = q.scale[0], z = static_cast<double>(q.zero_point[0]);
  for (float& v : t.data) v = static_cast<float>(std::nearbyint(static_cast<double>(v) / s) + z);
  return t;
}

}  // namespace

std::vector<std::string> QuantBoundaries(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) {
    if (IsBoundary(n.op)) out.push_back(n.output);
  }
  return out;
}

Graph WithBoundaryOutputs(const Graph& g) {
  Graph exposed = g;
  for (const std::string& v : QuantBoundaries(g)) {
    if (!g.IsGraphOutput(v) && AnsweredDequantized(g, v) == nullptr) exposed.outputs.push_back(v);
  }
  return exposed;
}

LayerwiseResult CheckLayers(Target& target, const Graph& g, const TensorMap& inputs,
                            const CheckOptions& opts, const TargetResult& plain_optimized) {
  LayerwiseResult res;
  const Graph exposed = WithBoundaryOutputs(g);
  RunRequest req;
  req.optimize = true;
  req.opt = opts.opt;
  req.threads = opts.threads;
  TargetResult run = target.Run(exposed, inputs, req);
  for (const std::string& v : QuantBoundaries(g)) {
    const Node* dq = AnsweredDequantized(g, v);
    auto answered = dq == nullptr ? run.outputs.end() : run.outputs.find(dq->output);
    if (run.outputs.count(v) == 0 && answered != run.outputs.end()) {
      run.outputs[v] = IntegersOf(answered->second, dq->quant.at("x"));
    }
  }
  res.rewrites_plain = RewriteLines(plain_optimized);
  res.rewrites_exposed = RewriteLines(run);
  if (run.status != RunStatus::kOk) {
    res.message = "the run with the boundaries exposed failed: " + run.message;
    return res;
  }
  res.ran = true;
  // The engine's own integers at every boundary it answered, forced into the reference.
  TensorMap forced;
  for (const std::string& v : QuantBoundaries(g)) {
    if (auto it = run.outputs.find(v); it != run.outputs.end()) forced[v] = it->second;
  }
  const QuantizeRounding rounding = target.caps().quantize_rounding;
  const RefTensorMap ref = RunReferenceTeacherForced(g, inputs, forced, false, rounding);
  OracleOptions oracle = opts.oracle;
  oracle.precision = target.caps().precision;
  const bool sigma = oracle.kind == OracleKind::kSigma;
  std::set<std::string> judged;
  res.min_informative_share = 1;
  bool any_integer = false;
  for (const Node& n : g.nodes) {
    const bool boundary = IsBoundary(n.op);
    if (!boundary && !g.IsGraphOutput(n.output)) continue;
    if (!judged.insert(n.output).second) continue;
    LayerCheck l;
    auto got = run.outputs.find(n.output);
    auto r = ref.find(n.output);
    if (got == run.outputs.end() || r == ref.end() || got->second.shape != r->second.shape) {
      l.value = n.output;
    } else if (!r->second.grid_t.empty()) {
      l = JudgeInteger(n.output, r->second, got->second, sigma);
    } else {
      l = JudgeFloat(g, n.output, ref, run.outputs, oracle);
    }
    l.node = n.name;
    l.op = std::string(OpName(n.op));
    if (l.integer && l.exposed) {
      any_integer = true;
      res.min_informative_share = std::min(res.min_informative_share, l.InformativeShare());
    }
    if (res.first_departing < 0 && l.failed > 0) {
      res.first_departing = static_cast<int>(res.layers.size());
    }
    res.layers.push_back(std::move(l));
  }
  if (!any_integer) res.min_informative_share = 0;
  res.engine_values = std::move(forced);
  return res;
}

}  // namespace fusefuzz
