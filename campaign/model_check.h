// `fusefuzz check MODEL`: a whole model (a user's, not a generated graph) on a target against the
// reference, over N input samples; per output the verdict and the worst element, for classifier
// outputs the top-1/top-5 agreement; on a finding: blame, minimize to the culprit subgraph and
// write a finding folder, as a campaign does (docs/check.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/check.h"
#include "targets/target.h"

namespace fusefuzz {

struct ModelCheckOptions {
  CheckOptions check;
  int samples = 1;    // seeded input samples (ignored with explicit inputs)
  uint64_t seed = 1;  // sample i uses seed + i
  bool minimize = true;
  double minimize_budget = 120;  // seconds
  std::string out_dir;           // finding folders go to OUT/findings/<signature>
  bool progress = false;         // one stderr line per phase and sample, as it happens
};

struct OutputCheck {
  std::string output;
  Verdict verdict = Verdict::kPass;
  WorstElement worst;
  // Classifier outputs ([N, K] or [N, K, 1, 1] with K >= 2): rows whose argmax (top-1) agrees
  // with the reference's, and whose reference top-1 is among the target's top 5.
  int64_t rows = 0, top1_agree = 0, top5_agree = 0;
};

struct SampleCheck {
  uint64_t seed = 0;
  CaseOutcome plain, optimized;      // unoptimized and optimized runs
  std::vector<OutputCheck> outputs;  // of the optimized run
};

struct ModelCheckResult {
  std::vector<SampleCheck> samples;
  bool finding = false;
  std::string kind;         // of the first finding
  std::string signature;    // its folder under OUT/findings/, "" when none was written
  std::string blamed_rule;  // "" when not blamed
  int64_t nodes_before = 0, nodes_after = 0;  // the culprit's size after minimization
  // The target declined the model (a run was UNSUPPORTED) and nothing was found: the model was
  // not checked. The first such message.
  std::string unsupported;
  double seconds = 0;
};

// `inputs`: explicit inputs (one sample), or empty to seed `samples` samples.
ModelCheckResult CheckModel(Target& target, const Graph& g, const TensorMap& inputs,
                            const ModelCheckOptions& o);

// The text report printed by `fusefuzz check`.
std::string ModelCheckText(const ModelCheckResult& r, const std::string& out_dir);

}  // namespace fusefuzz
