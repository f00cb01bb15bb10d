// Reproducer files ("format": "fusefuzz-repro", docs/reproducer-format.md): everything needed to
// replay a finding anywhere — graph, inputs, target and its options, oracle, the finding with its
// blamed rewrite, provenance — and the one-line command that replays it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/blame.h"
#include "harness/check.h"
#include "ir/limits.h"
#include "targets/target_spec.h"

namespace fusefuzz {

struct Repro {
  Graph graph;
  TensorMap inputs;
  std::string target = EmbeddedSpecText();  // a TargetSpec's text (targets/target_spec.h)
  OptimizeOptions opt;  // pipeline, disable, only, inject, bisect_limit (on_rewrite unused)
  OracleOptions oracle;
  bool kernel_check = true;
  // The target's hello "engine" (e.g. "onnxruntime-node 1.20.1": the release a finding was
  // found on) and "limits" (what it cannot do, e.g. "disable" -> why); empty when it said none.
  std::string engine;
  std::map<std::string, std::string> target_limits;

  // The finding.
  FindingKind kind = FindingKind::kNone;
  std::string verdict;  // MISMATCH, CRASH, ...
  Blame blame;          // rule, rewrite index, nodes, ablation, method
  WorstElement worst;
  std::string detail;      // oracle detail or target message
  std::string target_log;  // stderr tail of an external target that crashed or hung, or ""
  // For a target error, crash or timeout: which run failed, "optimized" (the unoptimized run
  // passed: a fusion-side failure, blamed and minimized like a mismatch) or "unoptimized"; ""
  // when unknown (older files, or no kernel check).
  std::string failing_run;
  // A known upstream bug this finding's signature is listed as (corpus/known baseline):
  // {"title", "link", "doc"}; null when not known.
  nlohmann::json known_upstream;

  // Provenance.
  std::string fusefuzz_version = FUSEFUZZ_VERSION;
  bool has_seed = false;
  uint64_t seed = 0;
  int64_t case_index = -1;
  // Base seed of the campaign: `fusefuzz gen --seed campaign_seed --case case_index` prints the
  // original (unminimized) case; `seed` is that case's own seed (`gen --seed seed`, no --case).
  bool has_campaign_seed = false;
  uint64_t campaign_seed = 0;
  // Where the reproducer was written, for exec: targets whose command may be a relative path.
  std::string working_dir;
  nlohmann::json generator;     // GenerationProvenance, or null
  nlohmann::json minimization;  // stats, or null

  // "fusefuzz replay FILE --expect fail"
  std::string Command(const std::string& path) const;
};

nlohmann::json ReproToJson(const Repro& r, const std::string& path_for_command = "repro.json");
std::string WriteRepro(const Repro& r, const std::string& path_for_command = "repro.json");
// Throws InputError naming source and JSON pointer.
Repro ReadRepro(const nlohmann::json& j, const std::string& source, const Limits& limits = {});
Repro ReadReproFile(const std::string& path, const Limits& limits = {});

// The target spec to run a reproducer read from `source` on: the command line's --target when
// given; else the recorded spec, except that a recorded `exec:` command (a shell command from a
// file) runs only with `trust_target` (--trust-target): otherwise InputError explaining both
// options. Every command that runs a reproducer's target goes through here.
std::string ReproTargetSpec(const Repro& r, const std::string& source,
                            const std::string& cli_target, bool trust_target);

// The finding's signature for dedup: target, kind, blamed rule, op pattern of the blamed nodes
// (or of the whole graph when nothing is blamed). A short readable slug plus a hash, usable as
// a folder name: "fusion-conv-bn-fold-Conv.BatchNorm-1a2b3c4d".
// A target error, crash or timeout is keyed by the class of its message (ErrorClass) alone,
// blamed or not ("target_error-error1a2b3c4d-..."); unblamed mismatches by the graph's structure.
std::string Signature(const Repro& r);

// A cheap key, before minimization, that groups cases likely to be one bug: the campaign
// minimizes only the first few cases of a bucket and files the rest as their duplicates. Equal
// to Signature(r) when that is already structural (a blamed rule, or an error class); for an
// unblamed mismatch: target, kind, the op producing the worst output and the rules that fired
// (`fired_rules`, the optimized run's rewrites), instead of the whole graph's structure.
std::string BucketKey(const Repro& r, const std::vector<std::string>& fired_rules);

CheckOptions CheckOptionsOf(const Repro& r);

// The ops of a (minimized) graph in node order, "Conv→BatchNorm→Relu" (a FusedConv's epilogue
// steps are nodes of their own, EpiloguesAsNodes; a FusedConv without epilogue is a Conv): what a
// campaign summary groups folders by.
std::string OpChain(const Graph& g);

}  // namespace fusefuzz
