#include "generators/choice_source.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "ir/error.h"

namespace fusefuzz {

uint64_t ChoiceSource::Draw(uint64_t max) {
  uint64_t v = DrawRaw(max);
  trace_.push_back(v);
  return v;
}

int64_t ChoiceSource::Int(int64_t lo, int64_t hi) {
  if (lo > hi) throw std::invalid_argument("ChoiceSource::Int: lo > hi");
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + Draw(span));
}

double ChoiceSource::Unit() {
  constexpr uint64_t kMax53 = (uint64_t{1} << 53) - 1;
  return static_cast<double>(Draw(kMax53)) * 0x1.0p-53;
}

bool ChoiceSource::Bool(double p) {
  if (!(p > 0)) {
    Draw(0);  // keep one draw per choice so traces line up whatever p is
    return false;
  }
  // u >= 1 - p has probability p and is false for u == 0 (exhausted bytes) unless p >= 1.
  return Unit() >= 1.0 - p;
}

size_t ChoiceSource::Pick(std::span<const double> weights) {
  double total = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w)) {
      throw std::invalid_argument("ChoiceSource::Pick: weights must be finite and >= 0");
    }
    total += w;
  }
  if (!(total > 0)) throw std::invalid_argument("ChoiceSource::Pick: weights sum to 0");
  double x = Unit() * total;
  size_t last = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    last = i;
    if (x < weights[i]) return i;
    x -= weights[i];
  }
  return last;  // rounding at the top end
}

namespace {
uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

SeededSource::SeededSource(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) s = SplitMix64(x);
}

uint64_t SeededSource::NextU64() {
  uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t SeededSource::DrawRaw(uint64_t max) {
  if (max == UINT64_MAX) return NextU64();
  uint64_t range = max + 1;
  // Reject the low 2^64 mod range values so that x % range is exactly uniform.
  uint64_t threshold = (0 - range) % range;
  for (;;) {
    uint64_t x = NextU64();
    if (x >= threshold) return x % range;
  }
}

uint64_t BytesSource::DrawRaw(uint64_t max) {
  if (max == 0) return 0;
  uint64_t result = 0;
  int bits = 0;
  // Consume bytes from the end until the range is covered, like FuzzedDataProvider.
  while (bits < 64 && (max >> bits) != 0 && size_ > 0) {
    result = (result << 8) | data_[size_ - 1];
    --size_;
    bits += 8;
  }
  if (max == UINT64_MAX) return result;
  return result % (max + 1);
}

uint64_t ReplaySource::DrawRaw(uint64_t max) {
  if (pos_ >= replay_.size()) return 0;
  uint64_t v = replay_[pos_++];
  if (max == UINT64_MAX || v <= max) return v;
  return v % (max + 1);
}

std::string TraceToString(const std::vector<uint64_t>& trace) {
  std::string out;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (i) out += ' ';
    out += std::to_string(trace[i]);
  }
  return out;
}

std::vector<uint64_t> TraceFromString(const std::string& text) {
  std::vector<uint64_t> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == ',') {
      ++i;
      continue;
    }
    size_t start = i;
    uint64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      uint64_t d = static_cast<uint64_t>(text[i] - '0');
      if (v > (UINT64_MAX - d) / 10) {
        throw InputError("trace offset " + std::to_string(start), "value exceeds 2^64-1");
      }
      v = v * 10 + d;
      ++i;
    }
    if (i == start) {
      throw InputError("trace offset " + std::to_string(i),
                       std::string("unexpected character '") + text[i] + "'");
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace fusefuzz
