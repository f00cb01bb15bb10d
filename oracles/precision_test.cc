// Reduced-precision judging (docs/oracle.md, "Reduced-precision targets"): a run declared fp16 or
// bf16 is held to its format's unit roundoff plus the rounding of its leaves, not to float32's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ir/json_io.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

// x[1,1,1,4] -> Relu -> v0: k = 12 (oracle_test.cc), one node without params: L = 1.
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

RefTensorMap Ref(std::vector<double> v) {
  RefTensorMap m;
  m["v0"] = {{1, 1, 1, 4}, v, v, std::vector<double>(4, 0.0)};
  return m;
}

TensorMap Cand(std::vector<float> d) { return {{"v0", Tensor({1, 1, 1, 4}, std::move(d))}}; }

OracleOptions At(Precision p) {
  OracleOptions o;
  o.precision = p;
  return o;
}

TEST(PrecisionOracle, LeafRoundingsCountInputsAndConstantFactors) {
  EXPECT_EQ(LeafRoundings(ReluGraph(), Precision::kFloat32), 0);
  EXPECT_EQ(LeafRoundings(ReluGraph(), Precision::kFloat16), 1);
  Graph g = ReluGraph();
  g.nodes[0].op = Op::LeakyRelu;
  g.nodes[0].attrs["alpha"] = 0.1;  // a rounded constant factor
  EXPECT_EQ(LeafRoundings(g, Precision::kBFloat16), 2);
}

TEST(PrecisionOracle, AnFp16RoundingErrorPassesAtFp16AndFailsAtFloat32) {
  // One fp16 rounding of 1.0 + 2^-12 per element: 0.5 u16, far above float32's 12 u32.
  const float c = static_cast<float>(1 + 0x1p-12 * 5);
  const RefTensorMap ref = Ref({1, 1, 1, 1});
  const OracleResult f16 = Compare(ReluGraph(), ref, Cand({c, c, c, c}), At(Precision::kFloat16));
  EXPECT_EQ(f16.verdict, Verdict::kPass) << f16.detail;
  EXPECT_DOUBLE_EQ(f16.k, 13);  // 12 + L
  // In units of u16 * m, plus fp16's floor 2^-14 / k.
  EXPECT_NEAR(f16.worst.ratio, 2.5 / (1 + 0x1p-3 / 13), 1e-9);
  const OracleResult f32 = Compare(ReluGraph(), ref, Cand({c, c, c, c}), At(Precision::kFloat32));
  EXPECT_EQ(f32.verdict, Verdict::kMismatch) << f32.detail;
}

TEST(PrecisionOracle, ReducedFormatsAreNotGivenMoreThanTheirBound) {
  // 14 u16 * m: beyond k + L = 13 at fp16, within bf16's 13 u8.
  const float c = static_cast<float>(1 + 14 * 0x1p-11);
  const RefTensorMap ref = Ref({1, 1, 1, 1});
  EXPECT_EQ(Compare(ReluGraph(), ref, Cand({c, c, c, c}), At(Precision::kFloat16)).verdict,
            Verdict::kMismatch);
  EXPECT_EQ(Compare(ReluGraph(), ref, Cand({c, c, c, c}), At(Precision::kBFloat16)).verdict,
            Verdict::kPass);
}

TEST(PrecisionOracle, Fp16OverflowAbove65504IsNotJudged) {
  const float inf = std::numeric_limits<float>::infinity();
  const RefTensorMap ref = Ref({70000, 1, 1, 1});
  const OracleResult r = Compare(ReluGraph(), ref, Cand({inf, 1, 1, 1}), At(Precision::kFloat16));
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
  EXPECT_EQ(r.overflowed, 1);
  // float32 does not overflow there: the same candidate is a mismatch.
  EXPECT_EQ(Compare(ReluGraph(), ref, Cand({inf, 1, 1, 1}), At(Precision::kFloat32)).verdict,
            Verdict::kMismatch);
}

// Range inside the graph (docs/oracle.md): a leaf or a partial sum beyond 65504 overflows an fp16
// computation whose result fits. The candidates are what armnn:fp16 returned on the minimized
// findings of a campaign (inf * 0 = NaN; a sum of two -40000 is -inf in fp16); the rule that
// looked at the outputs only called them kernel bugs.
Graph Parse(const std::string& text) { return ParseGraph(text, "precision_test"); }

OracleResult Judge(const Graph& g, const TensorMap& in, std::vector<float> cand, Precision p) {
  const RefTensorMap ref = RunReference(g, in);
  const Shape shape = ref.at(g.outputs[0]).shape;
  return Compare(g, ref, {{g.outputs[0], Tensor(shape, std::move(cand))}}, At(p));
}

// Conv 1x1 with two output channels, weights 0 and 0.5, of x = [3, 65536].
const char* kZeroWeightConv = R"({"format": "fusefuzz-graph", "version": 2,
  "inputs": [{"name": "x", "shape": [1, 1, 1, 2]}],
  "nodes": [{"name": "c", "op": "Conv", "inputs": ["x"], "outputs": ["y"],
             "params": {"W": {"shape": [2, 1, 1, 1], "data": [0, 0.5]}}}],
  "outputs": ["y"]})";

TEST(PrecisionOracle, Fp16LeafBeyondRangeTimesZeroWeightIsNotJudged) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const TensorMap in = {{"x", Tensor({1, 1, 1, 2}, {3, 65536})}};
  // fp16: 65536 -> inf; 0 * inf = NaN, 0.5 * inf = inf. Reference [0, 0, 1.5, 32768].
  const OracleResult r = Judge(Parse(kZeroWeightConv), in, {0, nan, 1.5, inf}, Precision::kFloat16);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
  EXPECT_EQ(r.overflowed, 2);
  EXPECT_EQ(r.compared, 2);
  // Not a wider bound: the elements whose computation fits are judged as before.
  const OracleResult wrong =
      Judge(Parse(kZeroWeightConv), in, {0, nan, 1.53f, inf}, Precision::kFloat16);
  EXPECT_EQ(wrong.verdict, Verdict::kMismatch) << wrong.detail;
  // float32 holds 65536: there, NaN is a mismatch.
  EXPECT_EQ(Judge(Parse(kZeroWeightConv), in, {0, nan, 1.5, 32768}, Precision::kFloat32).verdict,
            Verdict::kMismatch);
}

TEST(PrecisionOracle, Fp16PartialSumBeyondRangeIsNotJudged) {
  const Graph g = Parse(R"({"format": "fusefuzz-graph", "version": 2,
    "inputs": [{"name": "x", "shape": [1, 2, 1, 2]}],
    "nodes": [{"name": "p", "op": "GlobalAvgPool", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const TensorMap in = {{"x", Tensor({1, 2, 1, 2}, {-40000, -40000, 1, 2})}};
  // Mean -40000 fits fp16; the sum -80000 does not.
  const float inf = std::numeric_limits<float>::infinity();
  const OracleResult r = Judge(g, in, {-inf, 1.5}, Precision::kFloat16);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
  EXPECT_EQ(r.overflowed, 1);
  EXPECT_EQ(Judge(g, in, {-inf, 1.5}, Precision::kFloat32).verdict, Verdict::kMismatch);
  EXPECT_EQ(Judge(g, in, {-40000, 1.5}, Precision::kFloat32).verdict, Verdict::kPass);
}

TEST(PrecisionOracle, Fp16ReciprocalBeyondRangeIsNotJudged) {
  // x / 1e-5 fits for x = 0.3 (30000, magnitude 60000), but x * (1 / 1e-5) holds 1e5: inf in fp16.
  const Graph g = Parse(R"({"format": "fusefuzz-graph", "version": 2,
    "inputs": [{"name": "x", "shape": [1, 2, 1, 1]}],
    "nodes": [{"name": "d", "op": "Div", "inputs": ["x"], "outputs": ["y"],
               "params": {"B": {"shape": [1, 2, 1, 1], "data": [1e-5, 2]}}}],
    "outputs": ["y"]})");
  const TensorMap in = {{"x", Tensor({1, 2, 1, 1}, {0.3f, 3})}};
  const OracleResult r =
      Judge(g, in, {std::numeric_limits<float>::infinity(), 1.5}, Precision::kFloat16);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
  EXPECT_EQ(r.overflowed, 1);
}

TEST(PrecisionOracle, Fp16RangeMarginIsTheBoundsRelativeError) {
  // A computed value exceeds its exact peak by at most the bound's (k + L) u16: the limit is
  // 65504 / (1 + (k + L) u16), about 64940 here, so a leaf of 65400 (below 65504) is not judged.
  const Graph g = Parse(R"({"format": "fusefuzz-graph", "version": 2,
    "inputs": [{"name": "x", "shape": [1, 2, 1, 1]}],
    "nodes": [{"name": "p", "op": "GlobalAvgPool", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  const OracleResult r =
      Judge(g, {{"x", Tensor({1, 2, 1, 1}, {64000, 65400})}}, {64000, 65400}, Precision::kFloat16);
  const double limit = 65504 / (1 + r.k * 0x1p-11);
  EXPECT_GT(limit, 64000);
  EXPECT_LT(limit, 65400);
  EXPECT_EQ(r.compared, 1) << r.detail;
  EXPECT_EQ(r.overflowed, 1);
}

}  // namespace
}  // namespace fusefuzz
