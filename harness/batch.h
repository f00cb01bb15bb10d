// Several cases per engine call (docs/target-protocol.md, "Batches"): K cases joined into one
// graph that is their disjoint union (every name of case j prefixed "b<j>_"), run once
// unoptimized and once optimized, the answers split back by prefix and each case judged on its
// own against its own reference and bound. A case the batch does not pass is run alone before
// anything is filed, so a batch never makes a finding of its own: the alone verdict is the
// case's, and a case that fails only in the batch is reported as such (batch_only).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/check.h"

namespace fusefuzz {

// "b<j>_": the prefix of every name of case j in a batch.
std::string BatchPrefix(size_t j);

// The case (< cases) a batch name belongs to and the name without its prefix; nullopt for a
// name without such a prefix (a node the engine made, say).
std::optional<std::pair<size_t, std::string>> SplitBatchName(std::string_view name, size_t cases);

struct BatchCase {
  const Graph* graph = nullptr;
  const TensorMap* inputs = nullptr;
  const RefTensorMap* ref = nullptr;  // RunReference(*graph, *inputs)
};

// The disjoint union of the cases: case j's inputs, nodes (name, inputs, output) and outputs
// prefixed BatchPrefix(j), in case order; graph options joined (a permission any case needs).
void JoinBatch(const std::vector<BatchCase>& cases, Graph* g, TensorMap* inputs);

// A batch answer split per case. A rewrite is the case's whose prefix all its prefixed nodes
// carry; one over nodes of two cases is an interaction (those cases are `spanned` and run alone);
// one naming no case's node (ONNX Runtime reports rules without nodes) is `unattributed`.
struct BatchSplit {
  std::vector<TargetResult> runs;
  std::vector<bool> spanned;
  std::vector<Rewrite> unattributed;
  int64_t spanning_rewrites = 0;
};
// `r` must have status kOk.
BatchSplit SplitBatchResult(const TargetResult& r, size_t cases);

struct BatchedCase {
  // What is filed: the batch's judgement when the case passed there, else the alone run's.
  CaseOutcome outcome;
  bool alone = false;  // run alone: not PASS in a batch, spanned, or alone after halving
  // Failed in the batch (or its batch failed) but passed alone or in a smaller batch: never a
  // finding.
  bool batch_only = false;
};

struct BatchOutcome {
  std::vector<BatchedCase> cases;
  std::vector<Rewrite> unattributed;  // optimized run's rewrites no case's nodes name
  int64_t spanning_rewrites = 0;
  // The batch's run itself failed (error, crash, timeout, unsupported): its halves were checked
  // as batches again, down to single cases alone.
  std::string batch_failure;
};

// Checks the cases in one unoptimized and one optimized call of `target` (RunRequest::cases =
// their count, which scales the target's timeout), then each case not passed there alone with
// CheckCase. Same verdicts and findings as CheckCase on each case alone, unless a case passes in
// the batch but would fail alone. Never throws for target failures.
BatchOutcome CheckBatch(Target& target, const std::vector<BatchCase>& cases,
                        const CheckOptions& opts);

}  // namespace fusefuzz
