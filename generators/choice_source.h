// Where the generator's decisions come from. Every random choice in fusefuzz goes through one
// ChoiceSource so that a case can be reproduced from a seed, from libFuzzer bytes, or from a
// recorded trace, identically with any compiler and standard library: the distributions below
// are our own (std distributions differ between libstdc++ and libc++).
//
// All choice kinds reduce to one primitive, Draw(max) -> a value in [0, max]. The trace is the
// list of drawn values, so replaying it reproduces every choice exactly.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fusefuzz {

class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;

  // Uniform integer in [lo, hi]; lo <= hi (throws std::invalid_argument otherwise).
  int64_t Int(int64_t lo, int64_t hi);
  // Index in [0, weights.size()) with probability proportional to weights (each >= 0, finite,
  // positive sum; throws std::invalid_argument otherwise). A zero-weight index is never picked.
  size_t Pick(std::span<const double> weights);
  // True with probability p (clamped to [0, 1]). An exhausted bytes source gives false.
  bool Bool(double p);
  // Uniform double in [0, 1) with 53 random bits.
  double Unit();
  // Uniform double in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }

  // Every value drawn so far, in order (what ReplaySource replays).
  const std::vector<uint64_t>& trace() const { return trace_; }
  int64_t draws() const { return static_cast<int64_t>(trace_.size()); }

 protected:
  // A value in [0, max]. Back ends implement this only.
  virtual uint64_t DrawRaw(uint64_t max) = 0;

 private:
  uint64_t Draw(uint64_t max);
  std::vector<uint64_t> trace_;
};

// xoshiro256** seeded through splitmix64; unbiased ranges by rejection.
class SeededSource : public ChoiceSource {
 public:
  explicit SeededSource(uint64_t seed);
  uint64_t NextU64();

 protected:
  uint64_t DrawRaw(uint64_t max) override;

 private:
  uint64_t s_[4];
};

// libFuzzer bytes with FuzzedDataProvider-like semantics: each draw consumes just enough bytes
// from the END of the buffer (little-endian as read backwards) and reduces them modulo the range;
// once the bytes run out every draw returns 0, i.e. the minimum / first option / false.
class BytesSource : public ChoiceSource {
 public:
  BytesSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t remaining() const { return size_; }

 protected:
  uint64_t DrawRaw(uint64_t max) override;

 private:
  const uint8_t* data_;
  size_t size_;
};

// Replays a recorded trace. A value larger than the draw's max is reduced modulo max+1 (so an
// edited trace still works); past the end every draw returns 0.
class ReplaySource : public ChoiceSource {
 public:
  explicit ReplaySource(std::vector<uint64_t> trace) : replay_(std::move(trace)) {}
  bool exhausted() const { return pos_ >= replay_.size(); }

 protected:
  uint64_t DrawRaw(uint64_t max) override;

 private:
  std::vector<uint64_t> replay_;
  size_t pos_ = 0;
};

// Trace as text ("3 0 17 ...") for reproducers and back.
std::string TraceToString(const std::vector<uint64_t>& trace);
std::vector<uint64_t> TraceFromString(const std::string& text);  // throws InputError

}  // namespace fusefuzz
