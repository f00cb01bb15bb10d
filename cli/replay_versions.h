// `fusefuzz replay FOLDER... --versions onnxruntime@A..B[:LEVEL]` (docs/onnx.md, "Testing another
// release"): each reproducer replayed on every installed ONNX Runtime release from A to B, oldest
// first; per finding the verdict on each release, the first bad release and the first good one
// after it, printed and written into a finding folder (versions.json, a section of report.md).
#pragma once

#include <string>
#include <vector>

#include "targets/target.h"

namespace fusefuzz {

// What a release did with a finding: bad (the same finding; its blamed rule is not compared on
// a release that cannot blame), good (PASS), or other (another finding, UNSUPPORTED, MISTRUSTED,
// a target that does not start): neither, and left out of the bisection.
enum class ReleaseState { kBad, kGood, kOther };

struct ReleaseVerdict {
  std::string release;  // "1.20.1"
  ReleaseState state = ReleaseState::kOther;
  std::string verdict;  // PASS, MISMATCH, TARGET_ERROR, ... or "NOT RUN"
  std::string got;      // "fusion Pad_Fusion", "no finding", or why not run
};

// Over verdicts in release order: the first bad release; the last good one before it (where the
// bug is not yet); the first good one after it (where it is fixed). "" where there is none.
struct ReleaseBisection {
  std::string first_bad, last_good_before, first_good_after;
};
ReleaseBisection BisectReleases(const std::vector<ReleaseVerdict>& rows);

// One sentence: "first bad 1.17.0 (good on 1.16.3 before it); first good after it: 1.21.0".
std::string BisectionText(const ReleaseBisection& b, const std::vector<ReleaseVerdict>& rows);

// Runs `files` (reproducers) on each installed release in `range_text`; prints per finding and
// writes into finding folders. Returns the number of findings bad on at least one release.
// Throws InputError for a bad range, or when no installed release is in it.
int ReplayVersions(const std::vector<std::string>& files, const std::string& range_text,
                   const TargetSettings& settings, bool verbose);

}  // namespace fusefuzz
