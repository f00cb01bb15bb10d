// The arithmetic a target declares it computes in (hello "precision", docs/target-protocol.md):
// float32 unless it says otherwise. The oracle judges each run for what its target claims: an
// fp16 path is held to fp16's unit roundoff, not float32's (docs/oracle.md, "Reduced precision").
#pragma once

#include <cfloat>
#include <optional>
#include <string_view>

namespace fusefuzz {

enum class Precision { kFloat32, kFloat16, kBFloat16 };

// What the oracle needs of a floating-point format.
struct FormatFacts {
  double unit_roundoff;  // u = 2^-p for p significand bits (float32 2^-24)
  double tiny;           // the smallest normal number: flush-to-zero noise lies below it
  double max;            // the largest finite number: beyond it the format overflows
};

inline FormatFacts FactsOf(Precision p) {
  switch (p) {
    case Precision::kFloat32:
      return {0x1.0p-24, 0x1.0p-126, FLT_MAX};
    case Precision::kFloat16:  // IEEE binary16: 11 significand bits, exponents -14..15
      return {0x1.0p-11, 0x1.0p-14, 65504.0};
    case Precision::kBFloat16:  // bfloat16: 8 significand bits, float32's exponent range
      return {0x1.0p-8, 0x1.0p-126, 0x1.fep127};
  }
  return {0x1.0p-24, 0x1.0p-126, FLT_MAX};
}

inline std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFloat32:
      return "float32";
    case Precision::kFloat16:
      return "float16";
    case Precision::kBFloat16:
      return "bfloat16";
  }
  return "float32";
}

inline std::optional<Precision> PrecisionFromName(std::string_view name) {
  for (Precision p : {Precision::kFloat32, Precision::kFloat16, Precision::kBFloat16}) {
    if (PrecisionName(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace fusefuzz
