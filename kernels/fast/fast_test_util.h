// Helpers for the fast kernel tests: deterministic inputs, one-node graphs, and the comparison
// against the reference interpreter with the oracle's bound |fast - ref| <= 64 u m + 1e-30.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "kernels/fast/executor.h"
#include "kernels/reference/reference.h"

namespace fusefuzz::fast_test {

// SplitMix64 with our own float mapping (std distributions differ between standard libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float Uniform(float lo, float hi) {
    const float u = static_cast<float>(Next() >> 40) / static_cast<float>(1 << 24);  // [0, 1)
    return lo + (hi - lo) * u;
  }

 private:
  uint64_t state_;
};

inline Tensor Random(Shape shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Rng rng(seed);
  Tensor t(std::move(shape));
  for (float& v : t.data) v = rng.Uniform(lo, hi);
  return t;
}

inline Tensor Values(Shape shape, std::vector<float> data) {
  return Tensor(std::move(shape), std::move(data));
}

// A graph of one node reading graph inputs "x", "y", ... (as many as `inputs`), output "out".
inline Graph OneNode(Node n, const std::vector<Shape>& inputs) {
  Graph g;
  const char* names[] = {"x", "y", "z", "w"};
  n.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    g.inputs.push_back({names[i], inputs[i]});
    n.inputs.push_back(names[i]);
  }
  if (n.name.empty()) n.name = "n0";
  n.output = "out";
  g.nodes.push_back(std::move(n));
  g.outputs = {"out"};
  return g;
}

inline TensorMap Inputs(const Graph& g, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  TensorMap m;
  for (const auto& in : g.inputs) m[in.name] = Random(in.shape, seed++, lo, hi);
  return m;
}

constexpr double kUnit = 1.0 / 16777216.0;  // 2^-24

// Every element of `fast` within the oracle's bound of the reference; NaN where NaN.
inline void ExpectNearReference(const Tensor& fast, const RefTensor& ref, const std::string& what) {
  ASSERT_EQ(fast.shape, ref.shape) << what;
  ASSERT_FALSE(fast.data.empty()) << what << ": empty comparison";
  int bad = 0;
  for (size_t i = 0; i < fast.data.size(); ++i) {
    const double f = fast.data[i], r = ref.value[i], m = ref.mag[i];
    if (std::isnan(r) || std::isnan(f)) {
      EXPECT_EQ(std::isnan(r), std::isnan(f)) << what << " element " << i;
      continue;
    }
    const double bound = 64 * kUnit * m + 1e-30;
    if (!(std::abs(f - r) <= bound) && ++bad <= 5) {
      ADD_FAILURE() << what << " element " << i << ": fast " << f << " ref " << r << " mag " << m
                    << " ratio " << std::abs(f - r) / (kUnit * m);
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

// Runs `g` on the fast executor (with `threads`) at every ISA level this build and CPU can run,
// and on the reference; compares every output. Returns the default level's outputs.
inline TensorMap CheckAgainstReference(const Graph& g, const TensorMap& inputs,
                                       const std::string& what, int threads = 1) {
  const RefTensorMap ref = RunReference(g, inputs);
  for (FastIsa isa : AvailableFastIsas()) {
    const TensorMap fast = RunFast(g, inputs, FastOptions{threads, isa});
    EXPECT_EQ(fast.size(), g.outputs.size());
    for (const auto& o : g.outputs) {
      ExpectNearReference(fast.at(o), ref.at(o), what + " " + o + " [" + FastIsaName(isa) + "]");
    }
  }
  return RunFast(g, inputs, FastOptions{threads});
}

inline void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what) {
  EXPECT_TRUE(a.BitwiseEquals(b)) << what;
}

}  // namespace fusefuzz::fast_test
