// The bisect gate (model: LLVM OptBisect / DebugCounter). Passive: the driver asks it, before
// each rewrite, whether rewrite number `index` (from 1, counted per Optimize call) may be
// applied. It holds no state, so numbering never depends on process history.
#pragma once

#include <cstdint>

namespace fusefuzz {

class BisectGate {
 public:
  explicit BisectGate(int64_t limit) : limit_(limit) {}  // limit < 0: no limit
  bool ShouldApply(int64_t index) const { return limit_ < 0 || index <= limit_; }
  int64_t limit() const { return limit_; }

 private:
  int64_t limit_;
};

}  // namespace fusefuzz
