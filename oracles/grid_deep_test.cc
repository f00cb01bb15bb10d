// The integer-grid oracle on a deep chain of quantized convs (issue 26): the spread carried from
// layer to layer compounds through the L1 norm of the weights (grid_e) but not in quadrature
// (grid_es, --oracle sigma), so the sigma judgement of a 10-layer chain stays informative, and a
// bug planted at layer 8 is still found (docs/oracle.md, "Carried spread in quadrature").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "oracles/grid_test_util.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

using gridtest::Rng;

constexpr int kLayers = 10;
constexpr int64_t kC = 16, kH = 8, kW = 8, kZ = 10;  // output zero point above qmin

// One QDQ conv layer's parameters; the activation scales are calibrated on the chain itself.
struct Layer {
  std::vector<float> w_int;     // [kC, kC, 3, 3] integers
  std::vector<double> w_scale;  // per output channel
  std::vector<float> bias;      // float, off the int32 grid (an engine may round it there)
  QuantParams out;              // the Q after Relu
};

struct Chain {
  QuantParams in = PerTensor(QuantType::kUint8, 0.015625f, 128);
  std::vector<Layer> layers;
};

// A planted bug: the Relu of layer `drop_relu` is gone, or layer `zp_layer`'s DequantizeLinear
// reads its input with the zero point one step off.
struct Bug {
  int drop_relu = -1;
  int zp_layer = -1;
};

Node MakeNode(const std::string& name, Op op, std::vector<std::string> in, std::string out) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(in);
  n.output = std::move(out);
  return n;
}

// x -> Q -> [DQ -> Conv -> Relu -> Q] x layers (the first `layers`), output "y<layers>".
Graph ChainGraph(const Chain& ch, size_t layers, Bug bug = {}) {
  Graph g;
  g.inputs.push_back({"x", {1, kC, kH, kW}});
  Node q0 = MakeNode("q0", Op::QuantizeLinear, {"x"}, "y0");
  q0.quant["y"] = ch.in;
  g.nodes.push_back(q0);
  QuantParams prev = ch.in;
  for (size_t l = 0; l < layers; ++l) {
    const Layer& L = ch.layers[l];
    const std::string s = std::to_string(l), next = std::to_string(l + 1);
    Node dq = MakeNode("dq" + s, Op::DequantizeLinear, {"y" + s}, "f" + s);
    dq.quant["x"] = prev;
    if (bug.zp_layer == static_cast<int>(l)) dq.quant["x"].zero_point[0] += 1;
    Node conv = MakeNode("conv" + s, Op::Conv, {"f" + s}, "c" + s);
    conv.attrs = {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                  {"strides", std::vector<int64_t>{1, 1}},
                  {"group", int64_t{1}}};
    QuantParams wq;
    wq.type = QuantType::kInt8;
    wq.scale = L.w_scale;
    wq.zero_point.assign(L.w_scale.size(), 0);
    wq.axis = 0;
    Tensor w({kC, kC, 3, 3});
    for (size_t i = 0; i < w.data.size(); ++i) {
      w.data[i] = DequantizeOnnx(L.w_int[i], static_cast<float>(L.w_scale[i / (kC * 9)]), 0);
    }
    conv.params["W"] = w;
    conv.quant["W"] = wq;
    conv.params["B"] = Tensor({kC}, L.bias);
    g.nodes.push_back(dq);
    g.nodes.push_back(conv);
    std::string v = "c" + s;
    if (bug.drop_relu != static_cast<int>(l)) {
      g.nodes.push_back(MakeNode("relu" + s, Op::Relu, {v}, "a" + s));
      v = "a" + s;
    }
    Node q = MakeNode("q" + next, Op::QuantizeLinear, {v}, "y" + next);
    q.quant["y"] = L.out;
    g.nodes.push_back(q);
    prev = L.out;
  }
  g.outputs = {"y" + std::to_string(layers)};
  return g;
}

TensorMap ChainInputs(uint64_t seed) {
  Rng rng(seed);
  Tensor x({1, kC, kH, kW});
  for (float& v : x.data) v = static_cast<float>(rng.Uniform(-2, 2));
  return {{"x", x}};
}

// Random weights; each layer's output scale from the reference's largest Relu input on seed 1
// (min/max calibration, as `fusefuzz quantize` does), so that few elements saturate.
Chain MakeChain() {
  Chain ch;
  Rng rng(26);
  const TensorMap in = ChainInputs(1);
  for (int l = 0; l < kLayers; ++l) {
    Layer L;
    for (int64_t i = 0; i < kC * kC * 9; ++i) L.w_int.push_back(float(rng.Int(-127, 127)));
    for (int64_t m = 0; m < kC; ++m) {
      L.w_scale.push_back(static_cast<float>(rng.Uniform(0.5, 1.5) / (127 * 12)));
      L.bias.push_back(static_cast<float>(rng.Uniform(-0.05, 0.05)));
    }
    L.out = PerTensor(QuantType::kUint8, 1.0f, kZ);
    ch.layers.push_back(L);
    const RefTensorMap all = RunReference(ChainGraph(ch, ch.layers.size()), in, true);
    const RefTensor& c = all.at("c" + std::to_string(l));
    double hi = 0;
    for (double v : c.value) hi = std::max(hi, v);
    ch.layers.back().out = PerTensor(QuantType::kUint8, static_cast<float>(hi / (255 - kZ)), kZ);
  }
  return ch;
}

OracleResult Judge(const Graph& original, const Graph& candidate, const TensorMap& in,
                   OracleKind kind) {
  OracleOptions o;
  o.kind = kind;
  return Compare(original, RunReference(original, in), RunFast(candidate, in), o);
}

double MaxOf(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

TEST(GridDeepChain, SpreadDoesNotCompoundInQuadrature) {
  const Chain ch = MakeChain();
  const Graph g = ChainGraph(ch, kLayers);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const TensorMap in = ChainInputs(seed);
    const RefTensorMap ref = RunReference(g, in);
    const RefTensor& y = ref.at(g.outputs[0]);
    const double l1 = MaxOf(y.grid_e), quad = MaxOf(y.grid_es);
    std::cout << "seed " << seed << ": output E max " << l1 << " (L1), " << quad
              << " (quadrature)\n";
    EXPECT_GT(l1, 4 * quad) << "the L1 spread no longer compounds: is this chain still deep?";
    EXPECT_LE(quad, 3);
    // The unfused float32 engine passes under both, informatively only under sigma's.
    const OracleResult sigma = Judge(g, g, in, OracleKind::kSigma);
    EXPECT_EQ(sigma.verdict, Verdict::kPass) << sigma.detail;
    EXPECT_GT(sigma.grid.informative, sigma.grid.compared / 2) << sigma.detail;
    const OracleResult bound = Judge(g, g, in, OracleKind::kBound);
    EXPECT_NE(bound.verdict, Verdict::kMismatch) << bound.detail;
  }
}

TEST(GridDeepChain, BugsAtLayerEightAreFound) {
  const Chain ch = MakeChain();
  const Graph g = ChainGraph(ch, kLayers);
  Bug relu, zp;
  relu.drop_relu = 7;
  zp.zp_layer = 7;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const TensorMap in = ChainInputs(seed);
    const OracleResult r = Judge(g, ChainGraph(ch, kLayers, relu), in, OracleKind::kSigma);
    EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
    const OracleResult z = Judge(g, ChainGraph(ch, kLayers, zp), in, OracleKind::kSigma);
    EXPECT_EQ(z.verdict, Verdict::kMismatch) << z.detail;
  }
}

}  // namespace
}  // namespace fusefuzz
