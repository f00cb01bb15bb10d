// The sigma oracle on a deep residual net run by the fast kernels (float32, Eigen's GEMM order):
// it passes where the bound oracle can only say MISTRUSTED, and it still catches a fusion bug
// (the ReLU run before the residual Add, the declaration-order bug) and a dropped epsilon.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "kernels/fast/executor.h"
#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

struct Net {
  Graph graph;
  TensorMap inputs;
};

Tensor Random(Shape shape, std::mt19937& rng, double mean, double spread) {
  Tensor t(std::move(shape));
  std::normal_distribution<double> d(mean, spread);
  for (float& v : t.data) v = static_cast<float>(d(rng));
  return t;
}

Tensor RandomPositive(Shape shape, std::mt19937& rng, double lo, double hi) {
  Tensor t(std::move(shape));
  std::uniform_real_distribution<double> d(lo, hi);
  for (float& v : t.data) v = static_cast<float>(d(rng));
  return t;
}

// x[1,C,8,8] -> conv -> `blocks` x (conv-BN-ReLU-conv-BN, Add skip, ReLU) -> GlobalAvgPool ->
// Flatten -> Gemm(C -> 10): a small ResNet with random weights and BN statistics that are not
// the identity. `relu_before_add` moves block `fault_block`'s ReLU before its Add.
Net ResidualNet(int blocks, int64_t c, uint32_t seed, int fault_block = -1, double eps = 1e-5) {
  std::mt19937 rng(seed);
  Net net;
  Graph& g = net.graph;
  g.inputs = {{"x", {1, c, 8, 8}}};
  net.inputs["x"] = Random({1, c, 8, 8}, rng, 0, 1);
  int id = 0;
  auto add_node = [&](Op op, std::vector<std::string> in, AttrMap attrs = {},
                      ParamMap params = {}) {
    Node n;
    n.name = "n" + std::to_string(id);
    n.op = op;
    n.inputs = std::move(in);
    n.output = "v" + std::to_string(id++);
    n.attrs = std::move(attrs);
    n.params = std::move(params);
    g.nodes.push_back(n);
    return g.nodes.back().output;
  };
  const double he = std::sqrt(2.0 / (9.0 * static_cast<double>(c)));
  auto conv = [&](const std::string& in) {
    return add_node(Op::Conv, {in}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                    {{"W", Random({c, c, 3, 3}, rng, 0, he)}, {"B", Random({c}, rng, 0, 0.1)}});
  };
  auto bn = [&](const std::string& in, double epsilon) {
    return add_node(Op::BatchNorm, {in}, {{"epsilon", epsilon}},
                    {{"scale", RandomPositive({c}, rng, 0.5, 1.5)},
                     {"bias", Random({c}, rng, 0, 0.2)},
                     {"mean", Random({c}, rng, 0, 0.3)},
                     {"var", RandomPositive({c}, rng, 0.001, 0.01)}});
  };
  std::string v = conv("x");
  for (int b = 0; b < blocks; ++b) {
    const std::string skip = v;
    std::string h = add_node(Op::Relu, {bn(conv(v), b == fault_block ? eps : 1e-5)});
    h = bn(conv(h), 1e-5);
    if (b == fault_block && eps == 1e-5) {
      v = add_node(Op::Add, {add_node(Op::Relu, {h}), skip});
    } else {
      v = add_node(Op::Relu, {add_node(Op::Add, {h, skip})});
    }
  }
  v = add_node(Op::Flatten, {add_node(Op::GlobalAvgPool, {v})}, {{"axis", int64_t{1}}});
  v = add_node(Op::Gemm, {v}, {{"transB", int64_t{1}}},
               {{"B", Random({10, c}, rng, 0, 1 / std::sqrt(static_cast<double>(c)))},
                {"C", Random({10}, rng, 0, 0.1)}});
  g.outputs = {v};
  return net;
}

OracleResult Judge(const Net& original, const Net& run, OracleKind kind) {
  OracleOptions o;
  o.kind = kind;
  return Compare(original.graph, RunReference(original.graph, original.inputs),
                 RunFast(run.graph, run.inputs), o);
}

TEST(SigmaOracle, DeepResidualNetOnFastKernelsPassesWhereTheBoundCannotTell) {
  double worst = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Net net = ResidualNet(8, 16, seed);
    const OracleResult sigma = Judge(net, net, OracleKind::kSigma);
    EXPECT_EQ(sigma.verdict, Verdict::kPass) << "seed " << seed << ": " << sigma.detail;
    EXPECT_EQ(sigma.informative, sigma.compared) << sigma.detail;
    worst = std::max(worst, sigma.worst.ratio);
    const OracleResult bound = Judge(net, net, OracleKind::kBound);
    EXPECT_EQ(bound.verdict, Verdict::kMistrusted) << "seed " << seed << ": " << bound.detail;
  }
  // Legitimate float32 error stays well inside the factor (docs/oracle.md, measured).
  EXPECT_LT(worst, kSigmaFactor / 2);
}

TEST(SigmaOracle, CatchesTheReluBeforeTheResidualAdd) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Net net = ResidualNet(8, 16, seed);
    const Net bug = ResidualNet(8, 16, seed, /*fault_block=*/5);
    const OracleResult r = Judge(net, bug, OracleKind::kSigma);
    EXPECT_EQ(r.verdict, Verdict::kMismatch) << "seed " << seed << ": " << r.detail;
  }
}

TEST(SigmaOracle, CatchesADroppedEpsilon) {
  // var in [0.001, 0.01]: dropping eps = 1e-5 moves the BN's outputs by eps/(2 var), 5e-4 to
  // 5e-3 relative, far above float32 rounding through the net.
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Net net = ResidualNet(8, 16, seed);
    const Net bug = ResidualNet(8, 16, seed, /*fault_block=*/3, /*eps=*/0);
    const OracleResult r = Judge(net, bug, OracleKind::kSigma);
    EXPECT_EQ(r.verdict, Verdict::kMismatch) << "seed " << seed << ": " << r.detail;
  }
}

TEST(SigmaOracle, DescribesWhatFails) {
  OracleOptions o;
  o.kind = OracleKind::kSigma;
  EXPECT_EQ(OracleDescription(o), "sigma (an element fails beyond 8 error scales sigma)");
  o.k = 5;
  EXPECT_EQ(OracleDescription(o), "sigma (an element fails beyond 5 error scales sigma)");
  EXPECT_EQ(OracleKindFromName("sigma"), OracleKind::kSigma);
  o.kind = OracleKind::kBound;
  o.k = 0;
  EXPECT_EQ(OracleDescription(o),
            "bound (an element fails beyond k*u*magnitude, k derived from the graph)");
}

}  // namespace
}  // namespace fusefuzz
