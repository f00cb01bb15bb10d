// Which spellings a target gets (targets/target.h, TargetSpellings).
#include "ir/spelling.h"
#include "targets/target.h"

namespace fusefuzz {

std::set<std::string> TargetSpellings(const TargetCaps& caps) {
  std::set<std::string> out = caps.spellings;
  if (caps.onnx_only) {
    // fusefuzz writes the model, so it writes these for any target that reads only the model.
    for (const SpellingInfo& i : AllSpellings()) {
      if (i.family == SpellingFamily::kOnnx) out.insert(std::string(i.name));
    }
  }
  return out;
}

}  // namespace fusefuzz
