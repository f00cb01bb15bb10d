// Hand-built quantized graphs for the integer-grid oracle's tests and calibration: a QDQ conv
// (x -> Q -> DQ -> Conv [-> + DQ(r)] [-> act] -> Q) and its integer form (Q -> QLinearConv), from
// one parameter set, so a test can break one detail of the integer form at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/quant.h"

namespace fusefuzz::gridtest {

// A small deterministic generator (no std:: distributions: the same on every compiler).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  uint64_t Next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  int64_t Int(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }
  bool Bool(double p) { return Uniform(0, 1) < p; }

 private:
  uint64_t s_;
};

struct QConvCase {
  int64_t c = 2, m = 2, h = 5, w = 5, k = 3, stride = 1, pad = 1, group = 1;
  QuantParams x = PerTensor(QuantType::kUint8, 0.05f, 128);
  QuantParams y = PerTensor(QuantType::kUint8, 0.1f, 0);
  std::vector<double> w_scale = {0.01f, 0.02f};  // per output channel
  std::vector<float> w_int;                      // [m, c/group, k, k] integers
  std::vector<float> b_int;                      // [m] integers at s_x * s_w (empty: none)
  // Float bias off the s_x * s_w grid (the QDQ graph keeps it in float; the integer form rounds
  // it): used instead of b_int when non-empty.
  std::vector<float> b_float;
  bool residual = false;
  QuantParams r = PerTensor(QuantType::kUint8, 0.1f, 100);
  Op act = Op::Identity;  // Identity: none; Relu, Relu6, Clip
  double clip_lo = 0, clip_hi = 0;
};

// The QDQ graph (the reference's view): inputs "x" (float) and, with a residual, "r" (integers).
Graph QdqGraph(const QConvCase& q);
// The integer form: Q -> QLinearConv -> output "yq" (same names as the QDQ graph).
Graph IntegerGraph(const QConvCase& q);
// Random case and inputs biased toward the hard spots (ties, saturation, zero points at the
// ends of the range, activations whose kink falls inside the range).
QConvCase RandomCase(Rng& rng);
TensorMap RandomInputs(const QConvCase& q, Rng& rng);

}  // namespace fusefuzz::gridtest
