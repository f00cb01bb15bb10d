#include "oracles/oracle.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "ir/error.h"

namespace fusefuzz {
namespace {

constexpr double kU = 0x1.0p-24;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// x[1,1,1,4] -> Relu -> v0 (a graph whose factor k is small and known).
Graph ReluGraph() {
  Graph g;
  g.inputs = {{"x", {1, 1, 1, 4}}};
  Node n;
  n.name = "n0";
  n.op = Op::Relu;
  n.inputs = {"x"};
  n.output = "v0";
  g.nodes = {n};
  g.outputs = {"v0"};
  return g;
}

RefTensorMap Ref(std::vector<double> value, std::vector<double> mag) {
  RefTensorMap m;
  m["v0"] = {{1, 1, 1, 4}, std::move(value), std::move(mag), std::vector<double>(4, 0.0)};
  return m;
}

TensorMap Cand(std::vector<float> data) {
  TensorMap t;
  t["v0"] = Tensor({1, 1, 1, 4}, std::move(data));
  return t;
}

TEST(BoundOracle, ExactResultPasses) {
  OracleResult r = Compare(ReluGraph(), Ref({1, 2, 3, 0.5}, {1, 2, 3, 0.5}), Cand({1, 2, 3, 0.5f}));
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
  EXPECT_EQ(r.compared, 4);
  EXPECT_EQ(r.informative, 4);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.worst.ratio, 0);
  // Relu graph: k = 2 * (4 base + 2 for one piecewise-linear stage).
  EXPECT_DOUBLE_EQ(r.k, 12);
}

TEST(BoundOracle, RoundingNoiseAtUTimesMagnitudePasses) {
  // Magnitude 100 (cancellation: |r| = 1 from terms summing to 100 in absolute value); a float
  // computation may be off by a few u*m, far more than an ulp of r.
  std::vector<double> r = {1, -1, 0.5, 2}, m = {100, 100, 100, 100};
  std::vector<float> c;
  for (double v : r) c.push_back(static_cast<float>(v + 5 * kU * 100));
  OracleResult res = Compare(ReluGraph(), Ref(r, m), Cand(c));
  EXPECT_EQ(res.verdict, Verdict::kPass) << res.detail;
  EXPECT_NEAR(res.worst.ratio, 5, 0.6);
}

TEST(BoundOracle, SemanticChangeOfOrderRFailsWithTheWorstElement) {
  // E.g. a BN shift folded as bias + shift instead of bias*scale + shift: error ~|r|.
  std::vector<double> r = {1, -2, 3, 0.5}, m = {1, 2, 3, 0.5};
  OracleResult res = Compare(ReluGraph(), Ref(r, m), Cand({1, -2, 4.5f, 0.51f}));
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.failed, 2);
  EXPECT_EQ(res.worst.output, "v0");
  EXPECT_EQ(res.worst.index, 2);
  EXPECT_EQ(res.worst.reference, 3);
  EXPECT_EQ(res.worst.candidate, 4.5);
  EXPECT_NEAR(res.worst.ratio, 1.5 / (kU * 3), 1);
  EXPECT_NEAR(res.worst.bound, 12 * kU * 3, 1e-12);
  EXPECT_NE(res.detail.find("element 2"), std::string::npos) << res.detail;
}

TEST(BoundOracle, KOverrideIsUsed) {
  std::vector<double> r = {1, 1, 1, 1};
  std::vector<float> c(4, static_cast<float>(1 + 4 * kU));
  OracleOptions o;
  EXPECT_EQ(Compare(ReluGraph(), Ref(r, r), Cand(c), o).verdict, Verdict::kPass);
  o.k = 2;
  OracleResult res = Compare(ReluGraph(), Ref(r, r), Cand(c), o);
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.k, 2);
}

// Two outputs, each off by 4 u: a per-output tolerance decides for its own output only.
TEST(Oracle, PerOutputToleranceDecidesItsOwnOutputOnly) {
  Graph g = ReluGraph();
  Node n = g.nodes[0];
  n.name = "n1";
  n.output = "v1";
  g.nodes.push_back(n);
  g.outputs.push_back("v1");
  const std::vector<double> r = {1, 1, 1, 1};
  RefTensorMap ref = Ref(r, r);
  ref["v1"] = ref["v0"];
  TensorMap cand = Cand(std::vector<float>(4, static_cast<float>(1 + 4 * kU)));
  cand["v1"] = cand["v0"];
  OracleOptions o;
  o.k = 2;
  EXPECT_EQ(Compare(g, ref, cand, o).failed, 8);
  o.output_tolerance["v1"] = 10;
  OracleResult res = Compare(g, ref, cand, o);
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.failed, 4);
  EXPECT_EQ(res.worst.output, "v0");
  o.output_tolerance["v0"] = 10;
  EXPECT_EQ(Compare(g, ref, cand, o).verdict, Verdict::kPass);
  EXPECT_NE(OracleDescription(o).find("output 'v0' 10, 'v1' 10"), std::string::npos)
      << OracleDescription(o);
  // allclose: VALUE scales atol + rtol|r| of that output.
  o = {};
  o.kind = OracleKind::kAllclose;
  o.rtol = 0;
  o.atol = 1e-7;
  EXPECT_EQ(Compare(g, ref, cand, o).failed, 8);
  o.output_tolerance["v0"] = 100;
  EXPECT_EQ(Compare(g, ref, cand, o).failed, 4);
}

TEST(BoundOracle, NanPositionMustAgree) {
  OracleResult ok =
      Compare(ReluGraph(), Ref({1, kNaN, 3, 4}, {1, kNaN, 3, 4}), Cand({1, NAN, 3, 4}));
  EXPECT_EQ(ok.verdict, Verdict::kPass) << ok.detail;
  EXPECT_EQ(ok.nonfinite, 1);
  EXPECT_EQ(ok.compared, 3);
  OracleResult bad =
      Compare(ReluGraph(), Ref({1, kNaN, 3, 4}, {1, kNaN, 3, 4}), Cand({1, 2, 3, 4}));
  EXPECT_EQ(bad.verdict, Verdict::kMismatch);
  EXPECT_EQ(bad.worst.index, 1);
  EXPECT_TRUE(std::isinf(bad.worst.ratio));
  OracleResult moved = Compare(ReluGraph(), Ref({1, 2, 3, 4}, {1, 2, 3, 4}), Cand({1, 2, NAN, 4}));
  EXPECT_EQ(moved.verdict, Verdict::kMismatch);
  EXPECT_EQ(moved.worst.index, 2);
}

TEST(BoundOracle, InfSignMustAgree) {
  OracleResult ok = Compare(ReluGraph(), Ref({kInf, 1, 1, -kInf}, {kInf, 1, 1, kInf}),
                            Cand({INFINITY, 1, 1, -INFINITY}));
  EXPECT_EQ(ok.verdict, Verdict::kPass) << ok.detail;
  EXPECT_EQ(ok.nonfinite, 2);
  OracleResult bad =
      Compare(ReluGraph(), Ref({kInf, 1, 1, 1}, {kInf, 1, 1, 1}), Cand({-INFINITY, 1, 1, 1}));
  EXPECT_EQ(bad.verdict, Verdict::kMismatch);
  EXPECT_EQ(bad.worst.index, 0);
}

TEST(BoundOracle, OverflowIsCountedNotJudged) {
  // |r| beyond FLT_MAX (float32 gives inf), and m beyond FLT_MAX (an intermediate overflows).
  OracleResult res =
      Compare(ReluGraph(), Ref({1e39, 1, 2, 1}, {1e39, 1e39, 2, 1}), Cand({INFINITY, NAN, 2, 1}));
  EXPECT_EQ(res.verdict, Verdict::kPass) << res.detail;
  EXPECT_EQ(res.overflowed, 2);
  EXPECT_EQ(res.compared, 2);
}

TEST(BoundOracle, AllZerosIsMistrusted) {
  OracleResult res = Compare(ReluGraph(), Ref({0, 0, 0, 0}, {0, 0, 0, 0}), Cand({0, 0, 0, 0}));
  EXPECT_EQ(res.verdict, Verdict::kMistrusted) << res.detail;
  EXPECT_EQ(res.informative, 0);
  // Zeros from a clipped activation (m > 0): judged, but none informative.
  res = Compare(ReluGraph(), Ref({0, 0, 0, 0}, {1, 2, 3, 4}), Cand({0, 0, 0, 0}));
  EXPECT_EQ(res.verdict, Verdict::kMistrusted);
  EXPECT_EQ(res.compared, 4);
  // ... but a candidate that is not zero there still fails.
  res = Compare(ReluGraph(), Ref({0, 0, 0, 0}, {1, 2, 3, 4}), Cand({0, 0.5f, 0, 0}));
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
}

TEST(BoundOracle, BoundLargerThanValuesEverywhereIsMistrusted) {
  // |r| = 1e-9 from magnitudes 1e3: the bound (~1e-3) cannot tell r from 0 or -r.
  OracleResult res =
      Compare(ReluGraph(), Ref({1e-9, -1e-9, 1e-9, 0}, {1e3, 1e3, 1e3, 1e3}), Cand({0, 0, 0, 0}));
  EXPECT_EQ(res.verdict, Verdict::kMistrusted) << res.detail;
  EXPECT_EQ(res.compared, 4);
}

TEST(BoundOracle, NothingFiniteIsMistrusted) {
  OracleResult res = Compare(ReluGraph(), Ref({kNaN, kNaN, kInf, kInf}, {kNaN, kNaN, kInf, kInf}),
                             Cand({NAN, NAN, INFINITY, INFINITY}));
  EXPECT_EQ(res.verdict, Verdict::kMistrusted);
  EXPECT_EQ(res.nonfinite, 4);
}

TEST(BoundOracle, TinyFloorAbsorbsSubnormalNoiseOnly) {
  std::vector<double> r = {1, 0, 1, 1}, m = {1, 0, 1, 1};
  EXPECT_EQ(Compare(ReluGraph(), Ref(r, m), Cand({1, 1e-40f, 1, 1})).verdict, Verdict::kPass);
  OracleResult res = Compare(ReluGraph(), Ref(r, m), Cand({1, 1e-30f, 1, 1}));
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.worst.index, 1);
}

TEST(Oracle, StructuralProblems) {
  Graph g = ReluGraph();
  RefTensorMap ref = Ref({1, 2, 3, 4}, {1, 2, 3, 4});
  EXPECT_EQ(Compare(g, ref, {}).verdict, Verdict::kTargetError);
  TensorMap wrong_shape;
  wrong_shape["v0"] = Tensor({1, 1, 2, 2}, {1, 2, 3, 4});
  OracleResult res = Compare(g, ref, wrong_shape);
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_NE(res.detail.find("[1,1,2,2]"), std::string::npos) << res.detail;
  TensorMap short_data;
  short_data["v0"].shape = {1, 1, 1, 4};
  short_data["v0"].data = {1, 2};
  EXPECT_EQ(Compare(g, ref, short_data).verdict, Verdict::kTargetError);
  EXPECT_THROW(Compare(g, {}, Cand({1, 2, 3, 4})), InputError);
}

TEST(AllcloseOracle, Basics) {
  OracleOptions o;
  o.kind = OracleKind::kAllclose;
  o.rtol = 1e-3;
  o.atol = 1e-6;
  std::vector<double> r = {1, 2, 1000, 0};
  EXPECT_EQ(Compare(ReluGraph(), Ref(r, r), Cand({1.0005f, 2, 1000.9f, 5e-7f}), o).verdict,
            Verdict::kPass);
  OracleResult res = Compare(ReluGraph(), Ref(r, r), Cand({1, 2.01f, 1000, 0}), o);
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.worst.index, 1);
  EXPECT_NEAR(res.worst.bound, 1e-6 + 2e-3, 1e-12);
}

TEST(UlpOracle, Basics) {
  EXPECT_EQ(UlpDistance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(UlpDistance(0.0f, -0.0f), 0);
  EXPECT_EQ(UlpDistance(-FLT_TRUE_MIN, FLT_TRUE_MIN), 2);
  EXPECT_EQ(UlpDistance(1.0f, 1.0f), 0);
  OracleOptions o;
  o.kind = OracleKind::kUlp;
  o.max_ulp = 2;
  std::vector<double> r = {1, 2, 3, 4};
  float two_up = std::nextafter(std::nextafter(3.0f, 4.0f), 4.0f);
  EXPECT_EQ(Compare(ReluGraph(), Ref(r, r), Cand({1, 2, two_up, 4}), o).verdict, Verdict::kPass);
  OracleResult res =
      Compare(ReluGraph(), Ref(r, r), Cand({1, 2, std::nextafter(two_up, 4.0f), 4}), o);
  EXPECT_EQ(res.verdict, Verdict::kMismatch);
  EXPECT_EQ(res.worst.ratio, 3);
}

// x[1,C,8,8] -> Conv(C->4, k x k) [-> Relu -> Conv 3x3] -> out
Graph ConvGraph(int64_t c, int64_t k, bool deeper) {
  Graph g;
  g.inputs = {{"x", {1, c, 8, 8}}};
  Node conv;
  conv.name = "n0";
  conv.op = Op::Conv;
  conv.inputs = {"x"};
  conv.output = "v0";
  conv.params["W"] = Tensor({4, c, k, k});
  g.nodes.push_back(conv);
  g.outputs = {"v0"};
  if (deeper) {
    Node relu;
    relu.name = "n1";
    relu.op = Op::Relu;
    relu.inputs = {"v0"};
    relu.output = "v1";
    Node conv2 = conv;
    conv2.name = "n2";
    conv2.inputs = {"v1"};
    conv2.output = "v2";
    conv2.params["W"] = Tensor({4, 4, 3, 3});
    g.nodes.push_back(relu);
    g.nodes.push_back(conv2);
    g.outputs = {"v2"};
  }
  return g;
}

TEST(BoundFactor, GrowsWithReductionLengthAndDepth) {
  double k1 = DeriveBoundFactor(ConvGraph(1, 1, false), "v0");
  double k9 = DeriveBoundFactor(ConvGraph(1, 3, false), "v0");
  double k400 = DeriveBoundFactor(ConvGraph(16, 5, false), "v0");
  // Conv stage: sqrt(n) + 2 + 3, base 4, safety 2.
  EXPECT_DOUBLE_EQ(k1, 2 * (4 + 1 + 5));
  EXPECT_DOUBLE_EQ(k9, 2 * (4 + 3 + 5));
  EXPECT_DOUBLE_EQ(k400, 2 * (4 + 20 + 5));
  double deep = DeriveBoundFactor(ConvGraph(16, 5, true), "v2");
  EXPECT_DOUBLE_EQ(deep, k400 + 2 * (2 + 6 + 5));  // + Relu + Conv(4*3*3 = 36)
  auto all = DeriveBoundFactors(ConvGraph(16, 5, true));
  EXPECT_DOUBLE_EQ(all.at("x"), 8);
  EXPECT_LT(all.at("v0"), all.at("v1"));
}

TEST(Verdict, NamesRoundTrip) {
  for (Verdict v : {Verdict::kPass, Verdict::kMismatch, Verdict::kMistrusted, Verdict::kTargetError,
                    Verdict::kCrash, Verdict::kTimeout, Verdict::kUnsupported}) {
    EXPECT_EQ(VerdictFromName(VerdictName(v)), v);
  }
  EXPECT_EQ(VerdictName(Verdict::kTargetError), "TARGET_ERROR");
  EXPECT_FALSE(VerdictFromName("pass").has_value());
  EXPECT_EQ(OracleKindFromName("ulp"), OracleKind::kUlp);
  EXPECT_FALSE(OracleKindFromName("exact").has_value());
}

}  // namespace
}  // namespace fusefuzz
