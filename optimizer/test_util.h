// Shared by the optimizer tests: a seeded PRNG (splitmix64; no std distributions, which differ
// between standard libraries), node/graph builders, and the numeric agreement check of a rule:
// the optimized graph on the reference and on the fast executor against the original graph on
// the reference, within the magnitude bound of docs/oracle.md.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"
#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"
#include "optimizer/optimizer.h"

namespace fusefuzz::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }
  int64_t Int(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Coin() { return (Next() >> 63) != 0; }

 private:
  uint64_t s_;
};

inline Tensor RandTensor(Rng& rng, Shape shape, double lo = -1, double hi = 1) {
  Tensor t(shape);
  for (auto& v : t.data) v = static_cast<float>(rng.Uniform(lo, hi));
  return t;
}

inline Node MakeNode(Op op, std::string name, std::vector<std::string> inputs, std::string output,
                     AttrMap attrs = {}, ParamMap params = {}) {
  Node n;
  n.op = op;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.output = std::move(output);
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  return n;
}

// A conv with W [m, c/group, k, k], optional bias, pads [p,p,p,p].
inline Node MakeConv(Rng& rng, std::string name, std::string in, std::string out, int64_t c,
                     int64_t m, int64_t k, int64_t group = 1, bool bias = true, int64_t pad = 0,
                     int64_t stride = 1) {
  ParamMap p;
  p["W"] = RandTensor(rng, {m, c / group, k, k});
  if (bias) p["B"] = RandTensor(rng, {m});
  AttrMap a;
  a["group"] = group;
  a["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  a["strides"] = std::vector<int64_t>{stride, stride};
  return MakeNode(Op::Conv, std::move(name), {std::move(in)}, std::move(out), a, p);
}

inline Node MakeBn(Rng& rng, std::string name, std::string in, std::string out, int64_t c,
                   double eps = 1e-5) {
  ParamMap p;
  p["scale"] = RandTensor(rng, {c}, -2, 2);
  p["bias"] = RandTensor(rng, {c});
  p["mean"] = RandTensor(rng, {c});
  p["var"] = RandTensor(rng, {c}, 0.05, 2);
  return MakeNode(Op::BatchNorm, std::move(name), {std::move(in)}, std::move(out),
                  {{"epsilon", eps}}, p);
}

inline Graph MakeGraph(std::vector<ValueInfo> inputs, std::vector<Node> nodes,
                       std::vector<std::string> outputs) {
  Graph g;
  g.inputs = std::move(inputs);
  g.nodes = std::move(nodes);
  g.outputs = std::move(outputs);
  return g;
}

inline TensorMap RandInputs(Rng& rng, const Graph& g, double lo = -2, double hi = 2) {
  TensorMap m;
  for (const auto& in : g.inputs) m[in.name] = RandTensor(rng, in.shape, lo, hi);
  return m;
}

inline OptimizeResult RunOnly(const Graph& g, const std::string& rule) {
  OptimizeOptions o;
  o.only = {rule};
  return Optimize(g, o);
}

inline int CountOp(const Graph& g, Op op) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op == op; }));
}

// Optimized graph (reference and fast) vs original graph (reference), element by element:
// |c - r| <= 64 u m + 1e-6 max|r|, u = 2^-24, m the original's magnitude. Refuses empty
// comparisons.
inline void ExpectNumericAgreement(const Graph& original, const Graph& optimized,
                                   const TensorMap& inputs, const std::string& ctx) {
  RefTensorMap want = RunReference(original, inputs);
  RefTensorMap got_ref = RunReference(optimized, inputs);
  TensorMap got_fast = RunFast(optimized, inputs);
  ASSERT_FALSE(want.empty()) << ctx;
  const double u = std::ldexp(1.0, -24);
  for (const auto& [name, r] : want) {
    ASSERT_TRUE(got_ref.count(name)) << ctx << " output " << name;
    ASSERT_TRUE(got_fast.count(name)) << ctx << " output " << name;
    const RefTensor& c = got_ref.at(name);
    const Tensor& f = got_fast.at(name);
    ASSERT_EQ(c.shape, r.shape) << ctx << " output " << name;
    ASSERT_EQ(f.shape, r.shape) << ctx << " output " << name;
    ASSERT_GT(r.value.size(), 0u) << ctx;
    double max_abs = 0;
    for (double v : r.value) max_abs = std::max(max_abs, std::fabs(v));
    for (size_t i = 0; i < r.value.size(); ++i) {
      const double bound = 64 * u * r.mag[i] + 1e-6 * max_abs;
      ASSERT_LE(std::fabs(c.value[i] - r.value[i]), bound)
          << ctx << " reference, output " << name << "[" << i << "]: " << c.value[i] << " vs "
          << r.value[i] << " (mag " << r.mag[i] << ")";
      ASSERT_LE(std::fabs(double(f.data[i]) - r.value[i]), bound)
          << ctx << " fast, output " << name << "[" << i << "]: " << f.data[i] << " vs "
          << r.value[i] << " (mag " << r.mag[i] << ")";
    }
  }
}

// The rule fired at least once, the result verifies, and a second run fires nothing.
inline OptimizeResult ExpectFiresOnce(const Graph& g, const std::string& rule) {
  OptimizeResult r = RunOnly(g, rule);
  EXPECT_GE(r.rewrites.size(), 1u) << rule << " did not fire";
  for (const auto& rw : r.rewrites) EXPECT_EQ(rw.rule, rule);
  VerifyGraph(r.graph);
  EXPECT_TRUE(RunOnly(r.graph, rule).rewrites.empty()) << rule << " fired again on its result";
  EXPECT_EQ(r.graph.outputs, g.outputs);
  return r;
}

inline void ExpectNoFire(const Graph& g, const std::string& rule) {
  VerifyGraph(g);  // a negative test must be about the rule, not an invalid graph
  OptimizeResult r = RunOnly(g, rule);
  EXPECT_TRUE(r.rewrites.empty()) << rule << " fired where it must not";
  EXPECT_EQ(r.graph, g);
}

inline ValueInfo In(std::string name, Shape s) { return ValueInfo{std::move(name), std::move(s)}; }

}  // namespace fusefuzz::testing
