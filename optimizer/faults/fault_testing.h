// Shared by the fault tests: run a graph with and without a fault injected and measure how far
// the optimized graph moved from the original, both on the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/verifier.h"
#include "kernels/reference/reference.h"
#include "optimizer/optimizer.h"
#include "optimizer/test_util.h"

namespace fusefuzz::testing {

// Largest |optimized - original| over all outputs, and the largest |original|.
struct Deviation {
  double max_diff = 0;
  double max_ref = 0;
};

inline Deviation Measure(const Graph& original, const Graph& optimized, const TensorMap& inputs) {
  RefTensorMap want = RunReference(original, inputs);
  RefTensorMap got = RunReference(optimized, inputs);
  Deviation d;
  EXPECT_FALSE(want.empty());
  for (const auto& [name, r] : want) {
    EXPECT_TRUE(got.count(name)) << "output " << name;
    if (!got.count(name)) continue;
    const RefTensor& c = got.at(name);
    EXPECT_EQ(c.shape, r.shape) << "output " << name;
    if (c.shape != r.shape) continue;
    for (size_t i = 0; i < r.value.size(); ++i) {
      d.max_ref = std::max(d.max_ref, std::fabs(r.value[i]));
      d.max_diff = std::max(d.max_diff, std::fabs(c.value[i] - r.value[i]));
    }
  }
  return d;
}

inline OptimizeResult Inject(const Graph& g, const std::string& fault) {
  OptimizeOptions o;
  o.inject = {fault};
  return Optimize(g, o);
}

inline bool Fired(const OptimizeResult& r, const std::string& name) {
  return std::any_of(r.rewrites.begin(), r.rewrites.end(),
                     [&](const Rewrite& rw) { return rw.rule == name; });
}

// Far more than rounding: the fault's semantic change.
inline bool Visible(const Deviation& d) { return d.max_diff > 1e-2 * d.max_ref; }
// Rounding of float32 folding only.
inline bool Agrees(const Deviation& d) { return d.max_diff <= 1e-4 * d.max_ref + 1e-9; }

// The fault's condition holds in `g`: without the fault the optimizer is right; with it, the
// fault fires, the result verifies and keeps the outputs, and it is wrong by far more than
// rounding.
inline void ExpectFaultVisible(const Graph& g, const TensorMap& inputs, const std::string& fault) {
  VerifyGraph(g);
  OptimizeResult clean = Optimize(g);
  EXPECT_FALSE(Fired(clean, fault)) << fault << " fired without being injected";
  Deviation dc = Measure(g, clean.graph, inputs);
  EXPECT_GT(dc.max_ref, 0) << "empty comparison";
  EXPECT_TRUE(Agrees(dc)) << "without " << fault << ": max diff " << dc.max_diff << " vs max |r| "
                          << dc.max_ref;

  OptimizeResult bad = Inject(g, fault);
  EXPECT_TRUE(Fired(bad, fault)) << fault << " did not fire";
  EXPECT_NO_THROW(VerifyGraph(bad.graph)) << fault << " left an invalid graph";
  EXPECT_EQ(bad.graph.outputs, g.outputs);
  Deviation db = Measure(g, bad.graph, inputs);
  EXPECT_TRUE(Visible(db)) << "with " << fault << ": max diff " << db.max_diff << " vs max |r| "
                           << db.max_ref;
}

// The fault's condition does not hold in `g`: with the fault injected it fires (or not, as
// `expect_fire` says) and the result still agrees with the reference.
inline void ExpectFaultInvisible(const Graph& g, const TensorMap& inputs, const std::string& fault,
                                 bool expect_fire) {
  VerifyGraph(g);
  OptimizeResult bad = Inject(g, fault);
  EXPECT_EQ(Fired(bad, fault), expect_fire) << fault;
  EXPECT_NO_THROW(VerifyGraph(bad.graph));
  Deviation d = Measure(g, bad.graph, inputs);
  EXPECT_GT(d.max_ref, 0) << "empty comparison";
  EXPECT_TRUE(Agrees(d)) << "with " << fault << " where it should be invisible: max diff "
                         << d.max_diff << " vs max |r| " << d.max_ref;
}

// A BatchNorm with explicit parameters (all channels alike unless vectors are given).
inline Node MakeBnWith(std::string name, std::string in, std::string out, std::vector<float> scale,
                       std::vector<float> bias, std::vector<float> mean, std::vector<float> var,
                       double eps = 1e-5) {
  const int64_t c = static_cast<int64_t>(scale.size());
  return MakeNode(Op::BatchNorm, std::move(name), {std::move(in)}, std::move(out),
                  {{"epsilon", eps}},
                  {{"scale", Tensor({c}, std::move(scale))},
                   {"bias", Tensor({c}, std::move(bias))},
                   {"mean", Tensor({c}, std::move(mean))},
                   {"var", Tensor({c}, std::move(var))}});
}

}  // namespace fusefuzz::testing
