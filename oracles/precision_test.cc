// Reduced-precision judging (docs/oracle.md, "Reduced-precision targets"): a run declared fp16 or
// bf16 is held to its format's unit roundoff plus the rounding of its leaves, not to float32's.
#include <gtest/gtest.h>

#include <limits>

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

}  // namespace
}  // namespace fusefuzz
