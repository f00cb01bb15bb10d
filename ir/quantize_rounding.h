// The rounding a target declares its QuantizeLinear computes (hello "quantize_rounding",
// docs/target-protocol.md): ONNX's float32 x / s rounded half to even unless it says otherwise.
// The reference admits exactly the integers the declared rule can give for a given float
// (docs/oracle.md, "Declared quantize rounding"); a target that declares nothing gets nothing more.
#pragma once

#include <optional>
#include <string_view>

namespace fusefuzz {

enum class QuantizeRounding {
  kHalfEven,            // ONNX: round(fl(x / s)) half to even
  kHalfAway,            // round(fl(x / s)) half away from zero (std::round: Arm NN)
  kReciprocalMultiply,  // round(fl(x * fl(1 / s))), ties to even (XNNPACK's convert)
};

inline std::string_view QuantizeRoundingName(QuantizeRounding r) {
  switch (r) {
    case QuantizeRounding::kHalfEven:
      return "half_even";
    case QuantizeRounding::kHalfAway:
      return "half_away";
    case QuantizeRounding::kReciprocalMultiply:
      return "reciprocal_multiply";
  }
  return "half_even";
}

inline std::optional<QuantizeRounding> QuantizeRoundingFromName(std::string_view name) {
  for (QuantizeRounding r : {QuantizeRounding::kHalfEven, QuantizeRounding::kHalfAway,
                             QuantizeRounding::kReciprocalMultiply}) {
    if (QuantizeRoundingName(r) == name) return r;
  }
  return std::nullopt;
}

}  // namespace fusefuzz
