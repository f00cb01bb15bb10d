// `fusefuzz check MODEL`: a whole model (a user's, not a generated graph) on a target against the
// reference, over N input samples; per output the verdict and the worst element, for classifier
// outputs the top-1/top-5 agreement; on a finding: blame, minimize to the culprit subgraph and
// write a finding folder, as a campaign does (docs/check.md).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/layerwise.h"
#include "harness/repro.h"
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
  // `--layers`: judge every quantization boundary teacher-forced (harness/layerwise.h): one more
  // optimized run per sample, with the boundaries exposed as outputs.
  bool layers = false;
};

// Why an output with no informative element was not judged, and what would let it be.
struct NotJudged {
  bool is = false;
  int64_t elements = 0, informative = 0;
  std::string cause;   // "the integer grid's carried spread: ..."
  std::string advice;  // what to do, naming options that are not already in use
};

struct OutputCheck {
  std::string output;
  Verdict verdict = Verdict::kPass;
  WorstElement worst;
  // Classifier outputs (a final output, read by no node, of shape [N, K] or [N, K, 1, 1] with
  // K >= 2): rows whose argmax (top-1) agrees
  // with the reference's, and whose reference top-1 is among the target's top 5.
  int64_t rows = 0, top1_agree = 0, top5_agree = 0;
  // The logit error of a classifier output: the largest and the mean |target - reference| over
  // its elements, in the output's units (steps for an integer output).
  double logit_max_abs = 0, logit_mean_abs = 0;
  // Every judged element's error in the oracle's units (float outputs; n == 0 on an integer
  // grid or when nothing was judged).
  RatioStats stats;
  // Integer outputs (the grid oracle): elements, informative and saturated ones, failures and
  // the worst element's excess in steps; compared == 0 for a float output.
  GridSummary grid;
  // The output could not be judged: no element was informative (a wrong answer there would
  // still pass), so it neither passes nor fails (docs/check.md, "NOT JUDGED").
  NotJudged not_judged;
};

struct SampleCheck {
  uint64_t seed = 0;
  TensorMap inputs;                  // what both runs were given
  TensorMap reference;               // the reference's outputs, rounded to float32
  CaseOutcome plain, optimized;      // unoptimized and optimized runs
  std::vector<OutputCheck> outputs;  // of the optimized run
  // `--layers` on a model with quantization boundaries: the teacher-forced layer table. A
  // departing layer makes the sample a finding; every layer judged (and none departing) makes
  // an output NOT JUDGED as a whole judged layer by layer.
  std::optional<LayerwiseResult> layers;
};

// One verdict per sample, consistent with its runs and outputs: a finding when either run is
// one (or, with --layers, a layer departs), else NOT JUDGED when an output had no informative
// element (or a run could not be judged) and the layer table did not judge every layer, else
// PASS.
enum class SampleVerdict { kPass, kNotJudged, kFinding, kUnsupported };
SampleVerdict VerdictOfSample(const SampleCheck& s);
// The layer table judged the sample on its own: it ran, every boundary and output was answered
// and had an informative element, none departed.
bool JudgedByLayers(const SampleCheck& s);
std::string_view SampleVerdictName(SampleVerdict v);  // "PASS", "NOT JUDGED", ...

struct ModelCheckResult {
  std::vector<SampleCheck> samples;
  bool finding = false;
  std::string kind;         // of the first finding
  std::string signature;    // its folder under OUT/findings/, "" when none was written
  std::string blamed_rule;  // "" when not blamed
  int64_t nodes_before = 0, nodes_after = 0;  // the culprit's size after minimization
  // Where the minimizer started (issue 43): the block cut around the first departing layer
  // (harness/layer_cut.h), "" when it started from the whole model; its size and widening.
  std::string cut_layer;
  int64_t cut_nodes = 0;
  int cut_widen = 0;
  std::string cut_note;         // why no cut was used, when the model has quantization boundaries
  double minimize_seconds = 0;  // the cut and the minimization
  // The target declined the model (a run was UNSUPPORTED) and nothing was found: the model was
  // not checked. The first such message.
  std::string unsupported;
  // No finding, but some sample was NOT JUDGED: the check is not a pass (exit 3,
  // kExitNotJudged).
  bool not_judged = false;
  // `--layers`: some sample's teacher-forced layer table has a departing layer (a finding, exit 1,
  // even where the outputs' own judgement could not tell).
  bool layer_finding = false;
  double seconds = 0;
  OracleKind oracle_kind = OracleKind::kSigma;  // what judged it (for PassingTolerance)
};

// `fusefuzz check`'s exit status when nothing was found but some sample could not be judged
// (0 pass, 1 finding, 2 bad input or a model the target declined).
inline constexpr int kExitNotJudged = 3;

// `inputs`: explicit inputs (one sample), or empty to seed `samples` samples.
ModelCheckResult CheckModel(Target& target, const Graph& g, const TensorMap& inputs,
                            const ModelCheckOptions& o);

// The minimizer's starting point for a fusion finding `first` found on sample `s` of a quantized
// model: the block around the sample's first departing layer, its inputs the engine's integers
// there, when replaying that block gives the same finding (same kind, same blamed rule, the
// blamed nodes inside it); widened a boundary at a time up to twice, else `first` itself.
// Computes the layer table when `s` has none (one more optimized run). Fills result->cut_*.
Repro StartFromDepartingLayer(Target& target, const Graph& g, const SampleCheck& s,
                              const Repro& first, const CheckOptions& check,
                              const std::function<void(const std::string&)>& phase,
                              ModelCheckResult* result);

// The text report printed by `fusefuzz check`.
std::string ModelCheckText(const ModelCheckResult& r, const std::string& out_dir);

// The tolerance that would have passed, as the option that sets it: "--k 12.5" (bound, sigma),
// "--rtol/--atol x 3.2" (allclose), "--max-ulp 17" (ulp); "" when the output passed.
std::string PassingTolerance(const RatioStats& st, OracleKind kind);

// The result as JSON (`check --json`): per sample and output the verdicts, worst element and
// statistics, and the finding.
nlohmann::json ModelCheckJson(const ModelCheckResult& r, const std::string& target,
                              const OracleOptions& oracle);

}  // namespace fusefuzz
