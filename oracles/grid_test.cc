// The integer-grid oracle against the embedded engine's integer kernels: correct integer forms of
// hand-built QDQ convs pass (fused and unfused), and each classic int8 fusion bug is caught, in
// steps and at the right place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "oracles/grid_test_util.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

using gridtest::QConvCase;
using gridtest::Rng;

// A fixed case: u8 input (z 128), int8 per-channel weights, u8 output with zero point 10 (so a
// dropped ReLU is visible), a bias on the s_x * s_w grid.
QConvCase Fixed() {
  QConvCase q;
  q.c = 3, q.m = 4, q.h = 6, q.w = 6, q.k = 3, q.pad = 1;
  q.x = PerTensor(QuantType::kUint8, 0.03125f, 128);
  q.y = PerTensor(QuantType::kUint8, 0.0625f, 10);
  q.w_scale = {0.0078125f, 0.01f, 0.005f, 0.02f};
  Rng rng(7);
  for (int64_t i = 0; i < q.m * q.c * 9; ++i) q.w_int.push_back(float(rng.Int(-90, 90)));
  q.b_int = {400, -1200, 2500, -300};
  q.act = Op::Relu;
  return q;
}

TensorMap Inputs(const QConvCase& q, uint64_t seed) {
  Rng rng(seed);
  return gridtest::RandomInputs(q, rng);
}

OracleResult Judge(const QConvCase& q, const Graph& candidate, const TensorMap& in,
                   OracleKind kind = OracleKind::kBound) {
  const Graph original = gridtest::QdqGraph(q);
  const RefTensorMap ref = RunReference(original, in);
  OracleOptions o;
  o.kind = kind;
  return Compare(original, ref, RunFast(candidate, in), o);
}

TEST(GridOracle, IntegerFormAndUnfusedEnginePass) {
  const QConvCase q = Fixed();
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const TensorMap in = Inputs(q, seed);
    const OracleResult fused = Judge(q, gridtest::IntegerGraph(q), in);
    EXPECT_EQ(fused.verdict, Verdict::kPass) << fused.detail;
    EXPECT_GT(fused.grid.informative, 50);
    EXPECT_LE(fused.grid.excess, 0);
    const OracleResult unfused = Judge(q, gridtest::QdqGraph(q), in, OracleKind::kGrid);
    EXPECT_EQ(unfused.verdict, Verdict::kPass) << unfused.detail;
  }
}

TEST(GridOracle, ReferenceIntegersAreOnnxRounded) {
  // x = 0.5 * s: a tie, rounded to even (0), then + z.
  QConvCase q = Fixed();
  const Graph g = gridtest::QdqGraph(q);
  TensorMap in = Inputs(q, 1);
  in["x"].data[0] = 0.015625f;  // 0.5 steps -> 0 + 128
  in["x"].data[1] = 0.046875f;  // 1.5 steps -> 2 + 128
  in["x"].data[2] = -100.0f;    // saturates at 0
  const RefTensorMap all = RunReference(g, in, true);
  const RefTensor& xq = all.at("xq");
  EXPECT_EQ(xq.value[0], 128);
  EXPECT_EQ(xq.value[1], 130);
  EXPECT_EQ(xq.value[2], 0);
  EXPECT_DOUBLE_EQ(xq.grid_t[1], 129.5);
  // Both neighbours of a tie are admitted.
  const auto [lo, hi] = AdmittedRange(xq.grid_t[1], xq.grid_e[1], 0, 255);
  EXPECT_EQ(lo, 129);
  EXPECT_EQ(hi, 130);
}

TEST(GridOracle, DroppedReluWithZeroPointAboveQmin) {
  QConvCase q = Fixed();
  QConvCase bug = q;
  bug.act = Op::Identity;  // "the output range already starts at 0" - but z = 10, not qmin
  const OracleResult r = Judge(q, gridtest::IntegerGraph(bug), Inputs(q, 3));
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
  EXPECT_GE(r.grid.excess, 0.5) << r.detail;
  EXPECT_TRUE(r.worst.on_grid);
}

TEST(GridOracle, WrongZeroPoint) {
  QConvCase q = Fixed();
  q.act = Op::Identity;
  q.y = PerTensor(QuantType::kUint8, 0.125f, 128);
  QConvCase bug = q;
  bug.y.zero_point = {129};
  const OracleResult r = Judge(q, gridtest::IntegerGraph(bug), Inputs(q, 4));
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
  EXPECT_NE(r.grid.where.find("everywhere"), std::string::npos) << r.grid.where;
}

TEST(GridOracle, BiasOffByItsScale) {
  QConvCase q = Fixed();
  q.act = Op::Identity;
  QConvCase bug = q;
  // The bias kept at a scale twice s_x * s_w in one channel (ONNX Runtime #28229's kind).
  bug.b_int[2] = std::nearbyint(q.b_int[2] / 2);
  const OracleResult r = Judge(q, gridtest::IntegerGraph(bug), Inputs(q, 5));
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
  EXPECT_NE(r.grid.where.find("one channel (2)"), std::string::npos) << r.grid.where;
}

TEST(GridOracle, SaturationAtMinus127) {
  QConvCase q = Fixed();
  q.act = Op::Identity;
  q.y = PerTensor(QuantType::kInt8, 0.015625f, 0);  // small scale: many saturate
  QConvCase bug = q;
  // The clamp folded as [-127, 127] (ONNX Runtime #3442): a Clip whose Q(min) is -127.
  bug.act = Op::Clip;
  bug.clip_lo = -127 * 0.015625;
  bug.clip_hi = 1000;
  const OracleResult r = Judge(q, gridtest::IntegerGraph(bug), Inputs(q, 6));
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
  EXPECT_GT(r.grid.saturated, 0);
  EXPECT_EQ(r.worst.reference, -128);
  EXPECT_EQ(r.worst.candidate, -127);
  EXPECT_EQ(r.grid.excess, 1);
  // Named as what it is, not "a scale, zero point or activation" (issue 45, item 1).
  EXPECT_NE(r.grid.where.find("stop at -127 where the reference goes past it toward the limit "
                              "-128: a saturation limit"),
            std::string::npos)
      << r.grid.where;
}

TEST(GridOracle, PadValueIsNotTheZeroPoint) {
  // The QDQ graph pads the integers with 0 while the zero point is 128 (TVM #11127): the integer
  // conv, padding with the zero point, differs on the border only.
  QConvCase q = Fixed();
  q.act = Op::Identity;
  Graph original = gridtest::QdqGraph(q);
  Node pad;
  pad.name = "pad";
  pad.op = Op::Pad;
  pad.inputs = {"xq"};
  pad.output = "xp";
  pad.attrs = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"value", 0.0}};
  original.nodes.insert(original.nodes.begin() + 1, pad);
  original.nodes[2].inputs = {"xp"};  // DQ reads the padded integers
  original.nodes[3].attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
  const TensorMap in = Inputs(q, 8);
  const RefTensorMap ref = RunReference(original, in);
  const OracleResult r = Compare(original, ref, RunFast(gridtest::IntegerGraph(q), in));
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << r.detail;
  EXPECT_NE(r.grid.where.find("the border"), std::string::npos) << r.grid.where;
}

TEST(GridOracle, FloatBiasRoundedToInt32Passes) {
  // onednn rounds the bias to int32 at s_x * s_w, qnnpack keeps it in float: both are right,
  // and they differ by up to 0.5 s_x s_w / s_y steps: here s_x s_w = 2^-8, s_y = 2^-9, so up to
  // a whole step (channel 0's bias is a tie: 10.5 grid steps, rounded to 10).
  QConvCase q = Fixed();
  q.act = Op::Identity;
  q.w_scale = {0.125f, 0.125f, 0.125f, 0.125f};
  q.y = PerTensor(QuantType::kUint8, 0.001953125f, 128);
  for (size_t i = 0; i < q.w_int.size(); ++i) q.w_int[i] = static_cast<float>(int(i % 3) - 1);
  q.b_int.clear();
  const float sb = 0.00390625f;
  q.b_float = {10.5f * sb, 3.3f * sb, -7.45f * sb, 0.9f * sb};
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed);
    TensorMap in = Inputs(q, seed);
    for (float& v : in["x"].data) v = static_cast<float>(rng.Int(-2, 2)) * 0.03125f;
    const OracleResult r = Judge(q, gridtest::IntegerGraph(q), in);
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
    EXPECT_GT(r.grid.informative, 50) << r.detail;
  }
}

TEST(GridOracle, AllSaturatedIsMistrusted) {
  QConvCase q = Fixed();
  q.act = Op::Identity;
  q.y = PerTensor(QuantType::kUint8, 1e-6f, 0);
  for (float& b : q.b_int) b = 100000;  // every output far above the range
  const OracleResult r = Judge(q, gridtest::IntegerGraph(q), Inputs(q, 9));
  EXPECT_EQ(r.verdict, Verdict::kMistrusted) << r.detail;
}

// Random QDQ convs (ties, saturation, zero points at the ends, clip bounds near the edges,
// residuals): the integer form and the unfused float engine both pass; prints the smallest
// margin left (the worst legitimate excess). FUSEFUZZ_GRID_CALIBRATION=N runs N cases.
TEST(GridOracle, RandomCasesPassWithMargin) {
  const char* env = std::getenv("FUSEFUZZ_GRID_CALIBRATION");
  const int cases = env ? std::atoi(env) : 200;
  double worst = -1e300;        // the oracle's excess |c - t| - 0.5 - E (fails > 0)
  double used = 0, used_e = 0;  // the largest |c - t| - 0.5 an engine needed, and its E
  double mean_e = 0;
  int64_t judged = 0, informative = 0, saturated = 0, mistrusted = 0, beyond_half = 0;
  for (int i = 0; i < cases; ++i) {
    Rng rng(static_cast<uint64_t>(i) + 1000);
    const QConvCase q = gridtest::RandomCase(rng);
    const TensorMap in = gridtest::RandomInputs(q, rng);
    const Graph original = gridtest::QdqGraph(q);
    const RefTensorMap ref = RunReference(original, in);
    const RefTensor& y = ref.at("yq");
    for (const Graph& cand : {gridtest::IntegerGraph(q), original}) {
      const TensorMap out = RunFast(cand, in);
      const OracleResult r = Compare(original, ref, out);
      ASSERT_NE(r.verdict, Verdict::kMismatch) << "case " << i << ": " << r.detail;
      judged += r.grid.compared;
      informative += r.grid.informative;
      saturated += r.grid.saturated;
      mistrusted += r.verdict == Verdict::kMistrusted;
      const std::vector<float>& c = out.at("yq").data;
      for (size_t k = 0; k < c.size(); ++k) {
        const double t = y.grid_t[k];
        // In range (saturated elements must be the limit exactly: the oracle checks them).
        if (t < double(y.grid_qmin) - 0.5 || t > double(y.grid_qmax) + 0.5) continue;
        const double d = std::fabs(double(c[k]) - t) - 0.5;
        mean_e += y.grid_e[k];
        worst = std::max(worst, d - y.grid_e[k]);
        if (d > 1e-12) ++beyond_half;
        if (d > used) used = d, used_e = y.grid_e[k];
      }
    }
  }
  std::cout << "grid calibration: " << cases << " cases x 2 engines, " << judged
            << " integer elements (" << informative << " informative, " << saturated
            << " saturated), " << mistrusted << " MISTRUSTED; worst excess " << worst
            << " steps (fails > 0); " << beyond_half
            << " in-range elements beyond half a step, the largest by " << used
            << " steps where E was " << used_e << "; mean E "
            << mean_e / std::max<int64_t>(judged, 1) << " steps\n";
  EXPECT_LE(worst, 0);
}

}  // namespace
}  // namespace fusefuzz
