#include "fuzz/seed_bytes.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "ir/json_io.h"

namespace fusefuzz::fuzz {
namespace {

// A SeededSource that records each draw with its range.
class RecordingSource : public SeededSource {
 public:
  using SeededSource::SeededSource;
  const std::vector<std::pair<uint64_t, uint64_t>>& draws() const { return draws_; }

 protected:
  uint64_t DrawRaw(uint64_t max) override {
    const uint64_t v = SeededSource::DrawRaw(max);
    draws_.emplace_back(v, max);
    return v;
  }

 private:
  std::vector<std::pair<uint64_t, uint64_t>> draws_;  // (value, max)
};

// Bit for bit (NaN inputs are equal to themselves here).
bool SameInputs(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape || it->second.data.size() != t.data.size() ||
        std::memcmp(t.data.data(), it->second.data.data(), t.data.size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> BytesOfSeededCase(uint64_t seed, const GenConfig& cfg) {
  RecordingSource source(seed);
  const GeneratedCase c = Generate(source, cfg);
  // BytesSource reads each draw's bytes from the end of the buffer backwards, most significant
  // first, as many as cover `max` (choice_source.cc): written in reading order, then reversed.
  std::vector<uint8_t> read_order;
  for (const auto& [value, max] : source.draws()) {
    int bytes = 0;
    for (int bits = 0; bits < 64 && (max >> bits) != 0; bits += 8) ++bytes;
    for (int i = bytes - 1; i >= 0; --i)
      read_order.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  std::vector<uint8_t> out(read_order.rbegin(), read_order.rend());
  BytesSource back(out.data(), out.size());
  const GeneratedCase d = Generate(back, cfg);
  if (GraphToJson(d.graph) != GraphToJson(c.graph) || !SameInputs(d.inputs, c.inputs)) {
    throw std::logic_error("seed " + std::to_string(seed) +
                           ": the bytes do not decode to the seeded case");
  }
  return out;
}

}  // namespace fusefuzz::fuzz
