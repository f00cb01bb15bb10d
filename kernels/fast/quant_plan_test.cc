// The embedded engine's QLinearConv keeps each node's packed weights (kernels/fast/quant.cc,
// QConvPlans): runs on new inputs through one cached plan give the loops' answers, and a node
// whose weights or bias changed (in place, or another tensor) is never served the old plan.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/quant.h"
#include "ir/tensor.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/fast_test_util.h"
#include "kernels/fast/int8/qconv.h"

namespace fusefuzz {
namespace {

constexpr int64_t kC = 20, kH = 9, kW = 11;

// Integers in [lo, hi] held as floats, as the engine holds quantized tensors.
Tensor Integers(Shape shape, uint64_t seed, int lo, int hi) {
  fast_test::Rng rng(seed);
  Tensor t(shape);
  for (float& v : t.data) v = static_cast<float>(lo + static_cast<int>(rng.Next() % (hi - lo + 1)));
  return t;
}

// A 3x3 pad-1 QLinearConv, u8 in and out, per-channel weight scales; group 1 or depthwise.
Node QConvNode(int64_t group, uint64_t seed) {
  Node n;
  n.name = "qc";
  n.op = Op::QLinearConv;
  n.inputs = {"x"};
  n.output = "y";
  n.attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  if (group > 1) n.attrs["group"] = group;
  n.params["W"] = Integers({kC, kC / group, 3, 3}, seed, -128, 127);
  n.params["B"] = Integers({kC}, seed + 1, -3000, 3000);
  n.quant["x"] = PerTensor(QuantType::kUint8, 0.05, 7);
  n.quant["y"] = PerTensor(QuantType::kUint8, 0.5, 100);
  QuantParams w;
  w.type = QuantType::kInt8;
  w.axis = 0;
  w.scale.clear();
  w.zero_point.assign(kC, 0);
  for (int64_t m = 0; m < kC; ++m) w.scale.push_back(0.001 + 0.0005 * static_cast<double>(m));
  n.quant["w"] = w;
  return n;
}

// The loops' answer for node n on x, as the engine would hold it.
Tensor Expected(const Node& n, const Tensor& x) {
  const QuantParams &qx = n.quant.at("x"), &qw = n.quant.at("w"), &qy = n.quant.at("y");
  const Tensor &w = n.params.at("W"), &b = n.params.at("B");
  int8::QConvProblem p;
  p.c = kC, p.h = kH, p.w = kW, p.m = kC, p.kh = 3, p.kw = 3, p.oh = kH, p.ow = kW;
  p.pad_top = 1, p.pad_left = 1;
  p.group = kC / w.shape[1];
  p.x_zero_point = static_cast<int32_t>(qx.zero_point[0]);
  std::vector<uint8_t> xq(x.data.begin(), x.data.end());
  std::vector<int8_t> wq(w.data.begin(), w.data.end());
  std::vector<int32_t> bias(b.data.begin(), b.data.end());
  std::vector<float> mult;
  for (int64_t m = 0; m < kC; ++m) {
    mult.push_back(static_cast<float>(qx.scale[0] * qw.Scale(m) / qy.scale[0]));
  }
  std::vector<uint8_t> yq(static_cast<size_t>(kC * kH * kW));
  p.x = xq.data(), p.weights = wq.data(), p.bias = bias.data(), p.multiplier = mult.data();
  p.y_zero_point = static_cast<int32_t>(qy.zero_point[0]);
  p.y = yq.data();
  int8::QConvLoops(p);
  return Tensor({1, kC, kH, kW}, std::vector<float>(yq.begin(), yq.end()));
}

void ExpectLoops(const Node& n, const Tensor& x, int threads, const char* what) {
  FastOptions opts;
  opts.threads = threads;
  const Tensor got = RunFastNode(n, {&x}, {1, kC, kH, kW}, opts);
  EXPECT_TRUE(got.BitwiseEquals(Expected(n, x))) << what << ", " << threads << " threads";
}

TEST(QLinearConvPlans, NewInputsThroughOneCachedPlanGiveTheLoopsAnswers) {
  for (int64_t group : {int64_t{1}, kC}) {
    const Node n = QConvNode(group, 10);
    for (uint64_t s = 0; s < 3; ++s) {
      ExpectLoops(n, Integers({1, kC, kH, kW}, 100 + s, 0, 255), 1, "group 1 or depthwise");
      ExpectLoops(n, Integers({1, kC, kH, kW}, 200 + s, 0, 255), 3, "group 1 or depthwise");
    }
  }
}

TEST(QLinearConvPlans, ChangedWeightsAtTheSameNodeAreRepacked) {
  for (int64_t group : {int64_t{1}, kC}) {
    Node n = QConvNode(group, 20);
    const Tensor x = Integers({1, kC, kH, kW}, 300, 0, 255);
    ExpectLoops(n, x, 1, "first weights");
    // One weight changed in place: the same tensor, address and size.
    n.params["W"].data[5] = n.params["W"].data[5] == 127.0f ? -128.0f : 127.0f;
    ExpectLoops(n, x, 1, "one weight changed in place");
    // Another weight tensor at the same node.
    n.params["W"] = Integers(n.params["W"].shape, 21, -128, 127);
    ExpectLoops(n, x, 1, "another weight tensor");
    // The bias changed in place.
    n.params["B"].data[3] += 1000.0f;
    ExpectLoops(n, x, 1, "the bias changed in place");
  }
}

}  // namespace
}  // namespace fusefuzz
