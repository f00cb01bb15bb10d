// Accuracy of the vectorized transcendental activations at every ISA level, against double
// precision std:: functions, over every 64th float in [-20, 20] (a relative step of 8e-6 at every
// scale), every float bit pattern near 0 and around each branch point, and the extremes.
//
// What the bound admits (docs/oracle.md, "Transcendental activations in ulps"): an activation's
// own error is charged 4 u against the |f(x)| term of its magnitude, so |c - r| <= 4 u |r|
// (>= 2 ulps of r wherever r sits in its binade). Gelu's float32 formulas are charged against
// their whole magnitude |r| + L |x| (docs/oracle.md "Faithful float32 formulas"). Below the
// smallest normal float the oracle's floor 2^-126 applies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/fast/fast_ops.h"
#include "kernels/fast/fast_test_util.h"

namespace fusefuzz {
namespace {

constexpr double kU = 0x1p-24;
constexpr double kTiny = 0x1p-126;  // the oracle's floor
constexpr double kAdmitted = 4;     // ActivationCost of a transcendental op, units of u * scale

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Ulp distance on the ordered integer line (+0 and -0 coincide).
int64_t UlpDistance(float a, float b) {
  auto key = [](float f) {
    const int64_t mag = Bits(f) & 0x7fffffffu;
    return (Bits(f) >> 31) ? -mag : mag;
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

// Every input the sweep uses, both signs.
std::vector<float> SweepInputs() {
  std::vector<float> out;
  auto both = [&out](float f) {
    out.push_back(f);
    out.push_back(-f);
  };
  const uint32_t twenty = Bits(20.0f);
  for (uint32_t b = 0; b <= twenty; b += 64) both(FromBits(b));
  for (uint32_t b = 1; b < 65536; ++b) both(FromBits(b));  // subnormals next to 0
  // Every float around the branch points (tanh's 1/2, 0 for the sign-split forms, the erf
  // Gelu's |x| = sqrt2/2 and 2 sqrt2) and where tanh's exp branch reaches 1 in float.
  for (float p :
       {0.5f, 1.0f, 9.0f, 0x1p-12f, 0x1p-24f, 0.0004f, 7.9f, 15.6f, 0.70710678f, 2.82842712f}) {
    for (int d = -4096; d <= 4096; ++d) both(FromBits(static_cast<uint32_t>(Bits(p) + d)));
  }
  for (float f : {80.0f, 88.7f, 100.0f, 1e30f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min()}) {
    both(f);
  }
  return out;
}

struct Case {
  std::string name;
  Node node;
  std::function<double(double)> ref;
  double lipschitz;  // 0: charged against |r| alone
};

Node ActNode(Op op, AttrMap attrs = {}) {
  Node n;
  n.name = "act";
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

double Sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

std::vector<Case> Cases() {
  const double alpha = static_cast<double>(0.3f);  // the kernel's alpha, rounded to float
  return {
      {"Sigmoid", ActNode(Op::Sigmoid), Sigmoid, 0},
      {"Tanh", ActNode(Op::Tanh), [](double x) { return std::tanh(x); }, 0},
      {"Silu", ActNode(Op::Silu), [](double x) { return x * Sigmoid(x); }, 0},
      {"Elu", ActNode(Op::Elu, {{"alpha", 1.0}}),
       [](double x) { return x >= 0 ? x : std::expm1(x); }, 0},
      {"Elu(0.3)", ActNode(Op::Elu, {{"alpha", 0.3}}),
       [alpha](double x) { return x >= 0 ? x : alpha * std::expm1(x); }, 0},
      {"Gelu(tanh)", ActNode(Op::Gelu, {{"approximate", std::string("tanh")}}),
       [](double x) {
         return x * Sigmoid(2 * 0.79788456080286535588 * (x + 0.044715 * x * x * x));
       },
       1.128994},
      {"Gelu(erf)", ActNode(Op::Gelu, {{"approximate", std::string("none")}}),
       [](double x) { return 0.5 * x * std::erfc(-x / 1.41421356237309504880); }, 1.128905},
  };
}

struct Measured {
  int64_t max_ulps = 0;
  float ulps_at = 0;
  double max_ratio = 0;  // |c - r| / (u * scale + tiny / 4): admitted when <= 4
  float ratio_at = 0;
  int64_t nan_mismatches = 0;
};

Measured Measure(const Case& c, FastIsa isa, const std::vector<float>& xs,
                 const std::vector<double>& refs) {
  Tensor x;
  x.shape = {static_cast<int64_t>(xs.size())};
  x.data = xs;
  Tensor y = x;
  fast::KernelsFor(isa).activation(c.node, x, 1, y);
  Measured m;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double r = refs[i];
    const float got = y.data[i];
    if (std::isnan(r) || std::isinf(r)) {
      // NaN must stay NaN, an infinite result the same infinity.
      if (std::isnan(r) ? !std::isnan(got) : got != static_cast<float>(r)) ++m.nan_mismatches;
      continue;
    }
    if (!std::isfinite(got)) {
      ++m.nan_mismatches;
      continue;
    }
    const double scale = std::fabs(r) + c.lipschitz * std::fabs(static_cast<double>(xs[i]));
    const double ratio = std::fabs(got - r) / (kU * scale + kTiny / kAdmitted);
    if (ratio > m.max_ratio) m.max_ratio = ratio, m.ratio_at = xs[i];
    const float rf = static_cast<float>(r);
    const int64_t ulps = std::fabs(got - rf) < kTiny ? 0 : UlpDistance(got, rf);
    if (ulps > m.max_ulps) m.max_ulps = ulps, m.ulps_at = xs[i];
  }
  return m;
}

void Merge(Measured& into, const Measured& m) {
  if (m.max_ulps > into.max_ulps) into.max_ulps = m.max_ulps, into.ulps_at = m.ulps_at;
  if (m.max_ratio > into.max_ratio) into.max_ratio = m.max_ratio, into.ratio_at = m.ratio_at;
  into.nan_mismatches += m.nan_mismatches;
}

TEST(FastActivationUlp, WithinTheBoundAtEveryIsaLevel) {
  std::vector<float> xs = SweepInputs();
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  xs.push_back(-std::numeric_limits<float>::quiet_NaN());
  const std::vector<FastIsa> isas = AvailableFastIsas();
  constexpr size_t kBatch = 1 << 20;  // bounded memory: the sweep has ~35M inputs
  for (const Case& c : Cases()) {
    std::vector<Measured> all(isas.size());
    for (size_t begin = 0; begin < xs.size(); begin += kBatch) {
      const std::vector<float> batch(
          xs.begin() + static_cast<ptrdiff_t>(begin),
          xs.begin() + static_cast<ptrdiff_t>(std::min(xs.size(), begin + kBatch)));
      std::vector<double> refs(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) refs[i] = c.ref(static_cast<double>(batch[i]));
      for (size_t k = 0; k < isas.size(); ++k) Merge(all[k], Measure(c, isas[k], batch, refs));
    }
    for (size_t k = 0; k < isas.size(); ++k) {
      const Measured& m = all[k];
      const char* isa = FastIsaName(isas[k]);
      std::printf(
          "%-10s %-6s max %3lld ulps (at x = %.9g), max |c - r| / (u scale) %.3f (at %.9g)\n",
          c.name.c_str(), isa, static_cast<long long>(m.max_ulps), m.ulps_at, m.max_ratio,
          m.ratio_at);
      EXPECT_EQ(m.nan_mismatches, 0) << c.name << " " << isa;
      EXPECT_LE(m.max_ratio, kAdmitted) << c.name << " " << isa << " worst at x = " << m.ratio_at;
      if (c.lipschitz == 0) {
        // The same bound in ulps: 4 u |r| < 4 ulp(r), so at most 4 ulps from float(r).
        EXPECT_LE(m.max_ulps, 4) << c.name << " " << isa;
      }
    }
  }
}

// The same values however the tensor is split into planes and threads (chunk boundaries and
// Eigen's unaligned heads and tails move with the plane length).
TEST(FastActivationUlp, SameValuesForAnyThreadCount) {
  Tensor x = fast_test::Random({2, 3, 37, 29}, 5, -12.0f, 12.0f);
  for (const Case& c : Cases()) {
    for (FastIsa isa : AvailableFastIsas()) {
      Tensor one = x, four = x;
      fast::KernelsFor(isa).activation(c.node, x, 1, one);
      fast::KernelsFor(isa).activation(c.node, x, 4, four);
      EXPECT_EQ(one.data, four.data) << c.name << " " << FastIsaName(isa);
    }
  }
}

}  // namespace
}  // namespace fusefuzz
