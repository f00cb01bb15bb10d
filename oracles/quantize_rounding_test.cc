// A target's declared QuantizeLinear rounding (hello "quantize_rounding"): the grid facts admit
// exactly what the rule can give for a given float, and nothing more for a far-from-tie element
// or for a target that declares nothing (docs/oracle.md, "Declared quantize rounding").
#include <gtest/gtest.h>

#include "kernels/reference/reference.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

// x -> QuantizeLinear(s, z) [-> DequantizeLinear]: the lone-Q and Q -> DQ graphs the mobile
// campaigns minimized their findings to.
Graph QuantGraph(const QuantParams& q, bool dequantize) {
  Graph g;
  g.inputs.push_back({"x", {1, 1, 2, 1}});
  Node qn;
  qn.name = "q";
  qn.op = Op::QuantizeLinear;
  qn.inputs = {"x"};
  qn.output = "xq";
  qn.quant["y"] = q;
  g.nodes.push_back(qn);
  g.outputs = {"xq"};
  if (dequantize) {
    Node dq;
    dq.name = "dq";
    dq.op = Op::DequantizeLinear;
    dq.inputs = {"xq"};
    dq.output = "xf";
    dq.quant["x"] = q;
    g.nodes.push_back(dq);
    g.outputs = {"xf"};
  }
  return g;
}

// The candidate: integers c (or, through the DQ, (c - z) * s in float32).
Verdict Judge(const Graph& g, const QuantParams& q, std::vector<float> x, std::vector<float> c,
              QuantizeRounding rounding) {
  const TensorMap in = {{"x", Tensor{{1, 1, 2, 1}, std::move(x)}}};
  if (g.outputs[0] == "xf") {
    for (float& v : c) v = (v - static_cast<float>(q.zero_point[0])) * q.scale[0];
  }
  const TensorMap cand = {{g.outputs[0], Tensor{{1, 1, 2, 1}, std::move(c)}}};
  return Compare(g, RunReference(g, in, false, rounding), cand, OracleOptions{}).verdict;
}

// Arm NN's finding: 1.0 / 0.0235294122 is 42.5 in float32 (exactly 42.4999992): ONNX gives 42,
// std::round 43. Element 1 (x = 0.995, quotient 42.29) is far from a tie.
TEST(QuantizeRounding, HalfAwayAdmitsTheOtherNeighbourOnlyAtAnExactTie) {
  const QuantParams q = PerTensor(QuantType::kInt8, 0.0235294122f, 0);
  const Graph dq = QuantGraph(q, true);
  const std::vector<float> x = {1.0f, 0.995f};
  EXPECT_EQ(Judge(dq, q, x, {42, 42}, QuantizeRounding::kHalfEven), Verdict::kPass);
  EXPECT_EQ(Judge(dq, q, x, {42, 42}, QuantizeRounding::kHalfAway), Verdict::kPass);
  EXPECT_EQ(Judge(dq, q, x, {43, 42}, QuantizeRounding::kHalfAway), Verdict::kPass);
  // Declared nothing: ONNX's tie to even, carried through the DQ.
  EXPECT_EQ(Judge(dq, q, x, {43, 42}, QuantizeRounding::kHalfEven), Verdict::kMismatch);
  // Far from the tie, one step off fails whatever the rule.
  for (QuantizeRounding r : {QuantizeRounding::kHalfEven, QuantizeRounding::kHalfAway,
                             QuantizeRounding::kReciprocalMultiply}) {
    EXPECT_EQ(Judge(dq, q, x, {42, 43}, r), Verdict::kMismatch) << QuantizeRoundingName(r);
    EXPECT_EQ(Judge(QuantGraph(q, false), q, x, {42, 43}, r), Verdict::kMismatch)
        << QuantizeRoundingName(r);
  }
}

// XNNPACK's finding: -2.5 / 0.019607844 is -127.499992 in float32 (t = 0.500008 with z = 128),
// but fl(1 / s) = 51 and -2.5 * 51 = -127.5, a tie rounded to even: 0 where ONNX gives 1. The
// float32 quotient lies 7.6e-6 steps from the tie, inside 3u(1 + 2u)|q| = 2.3e-5.
TEST(QuantizeRounding, ReciprocalMultiplyAdmitsTheNeighbourWithinItsBound) {
  const QuantParams q = PerTensor(QuantType::kUint8, 0.019607844f, 128);
  // Element 1: -2.49 / s = -126.99: far from any tie.
  const std::vector<float> x = {-2.5f, -2.49f};
  for (bool dequantize : {false, true}) {
    const Graph g = QuantGraph(q, dequantize);
    EXPECT_EQ(Judge(g, q, x, {1, 1}, QuantizeRounding::kHalfEven), Verdict::kPass);
    EXPECT_EQ(Judge(g, q, x, {0, 1}, QuantizeRounding::kReciprocalMultiply), Verdict::kPass)
        << dequantize;
    EXPECT_EQ(Judge(g, q, x, {1, 1}, QuantizeRounding::kReciprocalMultiply), Verdict::kPass);
    EXPECT_EQ(Judge(g, q, x, {0, 1}, QuantizeRounding::kHalfEven), Verdict::kMismatch);
    // Not a tie for half-away: the float32 quotient is not 127.5.
    EXPECT_EQ(Judge(g, q, x, {0, 1}, QuantizeRounding::kHalfAway), Verdict::kMismatch);
    EXPECT_EQ(Judge(g, q, x, {1, 0}, QuantizeRounding::kReciprocalMultiply), Verdict::kMismatch);
  }
  // On the grid itself only the tie's two neighbours; past a DQ the spread is carried as a
  // distance (docs/oracle.md, term 4), so 2 is judged there as 0 is.
  EXPECT_EQ(Judge(QuantGraph(q, false), q, x, {2, 1}, QuantizeRounding::kReciprocalMultiply),
            Verdict::kMismatch);
}

// The armnn:int8 campaign after the half-away rule: x = -3, s = 6 is a tie (-0.5), Arm NN
// holds -1, so its DQ holds -6 where the reference holds 0, and its second Q divides -6 by
// 0.0470588244: the float32 quotient is the exact tie -127.5 (exactly -127.4999996), rounded
// away to -128. The division's rounding is taken at the value the engine holds (r plus the
// carried deviation), not at r = 0.
TEST(QuantizeRounding, TheCarriedTieIsRoundedWhereTheEngineHoldsIt) {
  const QuantParams q1 = PerTensor(QuantType::kInt8, 6.0f, 0);
  const QuantParams q2 = PerTensor(QuantType::kInt8, 0.0470588244f, 0);
  Graph g = QuantGraph(q1, true);
  Node q;
  q.name = "q2";
  q.op = Op::QuantizeLinear;
  q.inputs = {"xf"};
  q.output = "y";
  q.quant["y"] = q2;
  g.nodes.push_back(q);
  g.outputs = {"y"};
  const TensorMap in = {{"x", Tensor{{1, 1, 2, 1}, {0.0f, -3.0f}}}};
  auto judge = [&](std::vector<float> c, QuantizeRounding r) {
    const TensorMap cand = {{"y", Tensor{{1, 1, 2, 1}, std::move(c)}}};
    return Compare(g, RunReference(g, in, false, r), cand, OracleOptions{}).verdict;
  };
  EXPECT_EQ(judge({0, -128}, QuantizeRounding::kHalfAway), Verdict::kPass);
  EXPECT_EQ(judge({0, -128}, QuantizeRounding::kHalfEven), Verdict::kMismatch);
  EXPECT_EQ(judge({5, -128}, QuantizeRounding::kHalfAway), Verdict::kMismatch);
}

}  // namespace
}  // namespace fusefuzz
