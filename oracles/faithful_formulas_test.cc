// The bound oracle must admit every faithful float32 evaluation of the ONNX defining formulas
// (docs/oracle.md, "Faithful float32 formulas"): each test evaluates a formula literally in
// float32, as ONNX Runtime and PyTorch kernels do, over a sweep that includes the cancellation
// regions, with the transcendental results also nudged by a few ulps (vectorized exp/erf/tanh
// approximations), and asserts that nothing fails. Real semantic changes must still fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oracles/oracle.h"

namespace fusefuzz {
namespace {

using Formula = std::function<float(float)>;

// x moved by `ulps` float32 ulps (towards +inf when positive).
float Nudge(float x, int ulps) {
  const float to = ulps > 0 ? INFINITY : -INFINITY;
  for (int i = 0; i < std::abs(ulps); ++i) x = std::nextafter(x, to);
  return x;
}

// Inputs of an elementwise op: powers of two down to 2^-40 (the cancellation region of
// exp(x) - 1, 1 + erf, x/6 + 1/2 near their roots), a grid over [-30, 30], the neighbourhood of
// the kinks and the overflow edge of exp.
std::vector<float> Sweep() {
  std::vector<float> v = {0.0f, -0.0f};
  for (int e = 0; e <= 40; ++e) {
    for (float s : {1.0f, -1.0f, 3.0f, -3.0f}) v.push_back(std::ldexp(s, -e));
  }
  for (int i = -30 * 32; i <= 30 * 32; ++i) v.push_back(static_cast<float>(i) / 32.0f);
  for (float p : {-3.0f, 3.0f, -1.0f}) {
    for (int u = -4; u <= 4; ++u) v.push_back(Nudge(p, u));
  }
  for (float big : {50.0f, 87.0f, 88.5f, 89.0f, 100.0f}) {
    v.push_back(big);
    v.push_back(-big);
  }
  return v;
}

Graph OneNode(Op op, const Shape& shape, AttrMap attrs, ParamMap params = {}) {
  Graph g;
  g.inputs = {{"x", shape}};
  Node n;
  n.name = "n";
  n.op = op;
  n.inputs = {"x"};
  n.output = "y";
  n.attrs = std::move(attrs);
  n.params = std::move(params);
  g.nodes = {n};
  g.outputs = {"y"};
  return g;
}

OracleResult Judge(const Graph& g, const Tensor& x, const Tensor& candidate) {
  TensorMap feed = {{"x", x}};
  return Compare(g, RunReference(g, feed), {{"y", candidate}});
}

// Judges an elementwise formula over the sweep.
OracleResult JudgeElementwise(Op op, AttrMap attrs, const Formula& f) {
  const std::vector<float> xs = Sweep();
  const Shape shape = {1, 1, 1, static_cast<int64_t>(xs.size())};
  std::vector<float> ys;
  for (float x : xs) ys.push_back(f(x));
  return Judge(OneNode(op, shape, std::move(attrs)), Tensor(shape, xs), Tensor(shape, ys));
}

void ExpectAdmitted(Op op, AttrMap attrs, const Formula& f, const std::string& what) {
  OracleResult r = JudgeElementwise(op, std::move(attrs), f);
  EXPECT_EQ(r.verdict, Verdict::kPass) << what << ": " << r.detail;
  EXPECT_LE(r.worst.ratio, r.k / 2) << what << ": less than 2x margin: " << r.detail;
}

void ExpectRejected(Op op, AttrMap attrs, const Formula& f, const std::string& what) {
  OracleResult r = JudgeElementwise(op, std::move(attrs), f);
  EXPECT_EQ(r.verdict, Verdict::kMismatch) << what << ": " << r.detail;
}

// Transcendental results nudged by up to kNudge ulps: the accuracy of vectorized libraries
// (Sleef u10, Eigen, MLAS) is 1-2 ulps.
constexpr int kNudge = 2;

TEST(FaithfulFormulas, EluAsAlphaTimesExpMinusOne) {
  // ONNX Runtime and PyTorch: alpha*(exp(x)-1) in float32. At x = -2^-12 exp(x) rounds to a
  // float near 1 (error up to 2^-25) and the subtraction leaves ~2^-12: the old magnitude
  // 2|x| gave ratio 1024 against k = 16.
  for (double alpha : {1.0, 0.5, 2.5, -0.75}) {
    const float a = static_cast<float>(alpha);
    for (int nudge : {-kNudge, 0, kNudge}) {
      ExpectAdmitted(
          Op::Elu, {{"alpha", alpha}},
          [&](float x) { return x < 0 ? a * (Nudge(std::exp(x), nudge) - 1.0f) : x; },
          "Elu alpha " + std::to_string(alpha) + " nudge " + std::to_string(nudge));
    }
    // PyTorch's order: (exp(x) - 1) * alpha; and expm1 (the accurate way) of course.
    ExpectAdmitted(
        Op::Elu, {{"alpha", alpha}}, [&](float x) { return x <= 0 ? (std::exp(x) - 1.0f) * a : x; },
        "Elu torch");
    ExpectAdmitted(
        Op::Elu, {{"alpha", alpha}}, [&](float x) { return x < 0 ? a * std::expm1(x) : x; },
        "Elu expm1");
  }
}

TEST(FaithfulFormulas, EluSemanticChangesFail) {
  ExpectRejected(
      Op::Elu, {{"alpha", 2.5}}, [](float x) { return x < 0 ? std::exp(x) - 1.0f : x; },
      "alpha dropped");
  ExpectRejected(
      Op::Elu, {{"alpha", 1.0}}, [](float x) { return x < 0 ? std::exp(x) : x; }, "-1 dropped");
  ExpectRejected(
      Op::Elu, {{"alpha", 1.0}}, [](float x) { return x < 0 ? 0.0f : x; }, "Elu as Relu");
}

TEST(FaithfulFormulas, SigmoidSiluTanh) {
  for (int nudge : {-kNudge, 0, kNudge}) {
    auto e = [nudge](float x) { return Nudge(std::exp(x), nudge); };
    auto sig = [e](float x) { return 1.0f / (1.0f + e(-x)); };
    ExpectAdmitted(Op::Sigmoid, {}, sig, "Sigmoid 1/(1+exp(-x))");
    ExpectAdmitted(
        Op::Silu, {}, [sig](float x) { return x * sig(x); }, "Silu x*sigmoid(x)");
    ExpectAdmitted(
        Op::Silu, {}, [e](float x) { return x / (1.0f + e(-x)); }, "Silu x/(1+exp(-x))");
    ExpectAdmitted(
        Op::Tanh, {}, [nudge](float x) { return Nudge(std::tanh(x), nudge); }, "Tanh");
  }
  ExpectRejected(
      Op::Sigmoid, {}, [](float x) { return 1.0f / (1.0f + std::exp(x)); }, "sign of x");
  ExpectRejected(
      Op::Silu, {}, [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, "Silu as Sigmoid");
  ExpectRejected(
      Op::Tanh, {}, [](float x) { return 2.0f / (1.0f + std::exp(-x)) - 1.0f; }, "tanh(x/2)");
}

TEST(FaithfulFormulas, GeluBothForms) {
  const float rsqrt2 = 0.70710678f, c = 0.7978845608f;
  for (int nudge : {-kNudge, 0, kNudge}) {
    auto erf_form = [=](float x) { return 0.5f * x * (1.0f + Nudge(std::erf(x * rsqrt2), nudge)); };
    ExpectAdmitted(Op::Gelu, {{"approximate", std::string("none")}}, erf_form, "Gelu erf");
    ExpectAdmitted(
        Op::Gelu, {{"approximate", std::string("none")}},
        [=](float x) { return x * 0.5f * (1.0f + Nudge(std::erf(x / 1.41421356f), nudge)); },
        "Gelu erf, x/sqrt2");
    auto tanh_form = [=](float x) {
      return 0.5f * x * (1.0f + Nudge(std::tanh(c * (x + 0.044715f * x * x * x)), nudge));
    };
    ExpectAdmitted(Op::Gelu, {{"approximate", std::string("tanh")}}, tanh_form, "Gelu tanh");
  }
  // The two forms differ by up to ~5e-4: asking for one and computing the other is a change.
  ExpectRejected(
      Op::Gelu, {{"approximate", std::string("none")}},
      [=](float x) { return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x))); },
      "tanh form for erf");
  ExpectRejected(
      Op::Gelu, {{"approximate", std::string("tanh")}},
      [=](float x) { return 0.5f * x * (1.0f + std::erf(x * rsqrt2)); }, "erf form for tanh");
}

TEST(FaithfulFormulas, HardSwishHardSigmoid) {
  auto clamp01 = [](float v) { return std::fmax(0.0f, std::fmin(1.0f, v)); };
  ExpectAdmitted(
      Op::HardSwish, {}, [=](float x) { return x * clamp01(x / 6.0f + 0.5f); }, "HardSwish ONNX");
  ExpectAdmitted(
      Op::HardSwish, {}, [=](float x) { return x * clamp01((1.0f / 6.0f) * x + 0.5f); },
      "HardSwish as x*HardSigmoid(1/6, 1/2)");
  ExpectAdmitted(
      Op::HardSwish, {},
      [](float x) { return x * std::fmin(std::fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f; },
      "HardSwish torch");
  for (auto [alpha, beta] : {std::pair{0.2, 0.5}, {1.0 / 6, 0.5}, {-0.3, 0.1}, {2.5, -3.0}}) {
    const float a = static_cast<float>(alpha), b = static_cast<float>(beta);
    ExpectAdmitted(
        Op::HardSigmoid, {{"alpha", alpha}, {"beta", beta}},
        [=](float x) { return clamp01(a * x + b); }, "HardSigmoid");
  }
  // PyTorch's hardsigmoid is alpha = 1/6; ONNX's default is 0.2.
  ExpectRejected(
      Op::HardSigmoid, {{"alpha", 0.2}, {"beta", 0.5}},
      [=](float x) { return clamp01(x / 6.0f + 0.5f); }, "HardSigmoid alpha 1/6");
  ExpectRejected(
      Op::HardSwish, {}, [=](float x) { return x * clamp01(0.2f * x + 0.5f); },
      "HardSwish with alpha 0.2");
}

TEST(FaithfulFormulas, LeakyRelu) {
  for (double alpha : {0.01, 0.2, -1.5, 3.0}) {
    const float a = static_cast<float>(alpha);
    ExpectAdmitted(
        Op::LeakyRelu, {{"alpha", alpha}}, [=](float x) { return x < 0 ? a * x : x; }, "LeakyRelu");
  }
  ExpectRejected(
      Op::LeakyRelu, {{"alpha", 0.2}}, [](float x) { return x < 0 ? 0.01f * x : x; },
      "default slope 0.01 instead of 0.2");
}

// ---- Normalizations ---------------------------------------------------------------------------

// Deterministic inputs: mean `offset`, spread about `spread` (a fixed LCG, no std distributions).
std::vector<float> NormInputs(int64_t n, float offset, float spread, uint32_t seed) {
  std::vector<float> v;
  uint32_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    const float z = static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
    v.push_back(offset + spread * z);
  }
  return v;
}

enum class Variance { kOnePass, kTwoPass, kWelford, kUnbiased };

// Mean and variance of a span in float32, then (x - mean) / sqrt(var + eps) * scale + bias.
void NormalizeSpan(const float* x, float* y, int64_t n, float eps, float scale, float bias,
                   Variance how) {
  float mean = 0, var = 0;
  if (how == Variance::kWelford) {
    float m2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = x[i] - mean;
      mean += d / static_cast<float>(i + 1);
      m2 += d * (x[i] - mean);
    }
    var = m2 / static_cast<float>(n);
  } else {
    float sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      sum += x[i];
      sum_sq += x[i] * x[i];
    }
    mean = sum / static_cast<float>(n);
    if (how == Variance::kOnePass) {
      // ONNX LayerNormalization's function body: ReduceMean(X*X) - ReduceMean(X)^2. Kernels
      // clamp a negative difference to 0.
      var = std::fmax(0.0f, sum_sq / static_cast<float>(n) - mean * mean);
    } else {
      float sq = 0;
      for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
      var = sq / static_cast<float>(how == Variance::kUnbiased ? n - 1 : n);
    }
  }
  const float sigma = std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) / sigma * scale + bias;
}

// InstanceNorm over [1, 2, H, W] (LayerNorm with axis 2 and GroupNorm with 2 groups normalize
// the same spans) with every variance algorithm; offsets up to 300 sigma.
OracleResult JudgeNorm(Op op, int64_t hw, float offset, Variance how) {
  const int64_t channels = 2;
  const Shape shape = {1, channels, 1, hw};
  std::vector<float> x = NormInputs(channels * hw, offset, 1.0f, 7u + static_cast<uint32_t>(hw));
  const float scale[2] = {1.5f, -0.75f}, bias[2] = {0.25f, 2.0f};
  AttrMap attrs = {{"epsilon", 1e-5}};
  ParamMap params;
  if (op == Op::LayerNorm) {
    // axis 2 over [1, 2, 1, hw]: spans are the channels; scale/bias of shape [1, hw] are
    // per-element, so use the same value across the span to share the candidate code.
    attrs["axis"] = int64_t{2};
    params["scale"] = Tensor({1, hw}, 1.5f);
    params["bias"] = Tensor({1, hw}, 0.25f);
  } else {
    params["scale"] = Tensor({channels}, std::vector<float>{scale[0], scale[1]});
    params["bias"] = Tensor({channels}, std::vector<float>{bias[0], bias[1]});
    if (op == Op::GroupNorm) attrs["num_groups"] = int64_t{2};
  }
  std::vector<float> y(x.size());
  for (int64_t c = 0; c < channels; ++c) {
    const bool ln = op == Op::LayerNorm;
    NormalizeSpan(&x[c * hw], &y[c * hw], hw, 1e-5f, ln ? 1.5f : scale[c], ln ? 0.25f : bias[c],
                  how);
  }
  return Judge(OneNode(op, shape, attrs, params), Tensor(shape, x), Tensor(shape, y));
}

TEST(FaithfulFormulas, NormsWithAnyFloat32Variance) {
  for (Op op : {Op::InstanceNorm, Op::GroupNorm, Op::LayerNorm}) {
    for (int64_t hw : {1, 2, 7, 49, 256, 1024}) {
      for (float offset : {0.0f, 1.0f, 4.0f, 30.0f, 300.0f}) {
        for (Variance how : {Variance::kOnePass, Variance::kTwoPass, Variance::kWelford}) {
          OracleResult r = JudgeNorm(op, hw, offset, how);
          EXPECT_NE(r.verdict, Verdict::kMismatch)
              << OpName(op) << " hw " << hw << " offset " << offset << " variance "
              << static_cast<int>(how) << ": " << r.detail;
          EXPECT_LE(r.worst.ratio, r.k / 2) << OpName(op) << " hw " << hw << " offset " << offset
                                            << ": less than 2x margin: " << r.detail;
          // Where the data is well centred the comparison is informative (PASS, not MISTRUSTED).
          if (offset <= 4.0f && hw > 1) {
            EXPECT_EQ(r.verdict, Verdict::kPass) << r.detail;
          }
        }
      }
    }
  }
}

TEST(FaithfulFormulas, NormSemanticChangesFail) {
  // torch.var's default (unbiased, n - 1) instead of the biased variance: 1% at n = 49.
  for (Op op : {Op::InstanceNorm, Op::GroupNorm, Op::LayerNorm}) {
    for (float offset : {0.0f, 1.0f, 4.0f}) {
      OracleResult r = JudgeNorm(op, 49, offset, Variance::kUnbiased);
      EXPECT_EQ(r.verdict, Verdict::kMismatch) << OpName(op) << " offset " << offset;
    }
  }
}

TEST(FaithfulFormulas, BatchNormUnfoldedAndFolded) {
  const Shape shape = {1, 2, 1, 64};
  std::vector<float> x = NormInputs(128, 3.0f, 10.0f, 11u);
  const float g[2] = {1.5f, -0.2f}, b[2] = {0.5f, 3.0f}, mu[2] = {2.9f, -40.0f},
              var[2] = {0.01f, 900.0f};
  const float eps = 1e-5f;
  ParamMap p = {{"scale", Tensor({2}, std::vector<float>{g[0], g[1]})},
                {"bias", Tensor({2}, std::vector<float>{b[0], b[1]})},
                {"mean", Tensor({2}, std::vector<float>{mu[0], mu[1]})},
                {"var", Tensor({2}, std::vector<float>{var[0], var[1]})}};
  const Graph graph = OneNode(Op::BatchNorm, shape, {{"epsilon", 1e-5}}, p);
  std::vector<float> unfolded(x.size()), folded(x.size()), no_eps(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = i / 64;
    unfolded[i] = (x[i] - mu[c]) / std::sqrt(var[c] + eps) * g[c] + b[c];
    const float s = g[c] / std::sqrt(var[c] + eps), t = b[c] - mu[c] * s;
    folded[i] = x[i] * s + t;
    no_eps[i] = (x[i] - mu[c]) / std::sqrt(var[c]) * g[c] + b[c];
  }
  EXPECT_EQ(Judge(graph, Tensor(shape, x), Tensor(shape, unfolded)).verdict, Verdict::kPass);
  EXPECT_EQ(Judge(graph, Tensor(shape, x), Tensor(shape, folded)).verdict, Verdict::kPass);
  EXPECT_EQ(Judge(graph, Tensor(shape, x), Tensor(shape, no_eps)).verdict, Verdict::kMismatch);
}

}  // namespace
}  // namespace fusefuzz
