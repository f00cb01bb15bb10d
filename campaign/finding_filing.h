// Filing a campaign's findings in OUT: buckets, minimization, signatures, folders.
//
// A finding is first keyed by its cheap BucketKey. The first kMinimizedPerBucket cases of a
// bucket (claimed with O_EXCL files in OUT/.buckets/) are checked for kernel sensitivity,
// minimized and signed from the MINIMIZED case (harness/repro.h Signature); the others are
// duplicates of what those slot holders recorded (OUT/.buckets/<bucket>.<k>.json). Buckets whose
// minimized cases sign alike merge into one folder findings/<signature>, written under a
// per-signature lock (OUT/.claims/) into OUT/.tmp/ and renamed into place when complete.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "campaign/known_signatures.h"
#include "campaign/known_upstream.h"
#include "harness/repro.h"
#include "report/target_answer.h"
#include "targets/target.h"

namespace fusefuzz {

inline constexpr int kMinimizedPerBucket = 3;

// The folders of an output folder.
struct OutLayout {
  std::string out, findings, claims, buckets, tmp;
  explicit OutLayout(const std::string& dir)
      : out(dir),
        findings(dir + "/findings"),
        claims(dir + "/.claims"),
        buckets(dir + "/.buckets"),
        tmp(dir + "/.tmp") {}
};

struct FilingOptions {
  bool minimize = true;
  double minimize_budget = 10;  // seconds per minimized case
  bool sensitivity_check = true;
  KnownSignatures known;  // signatures counted as known (--known), never written
  // Known upstream bugs of the target's engine release (corpus/known): counted as known, but
  // written, their folder marked with the bug's link.
  KnownUpstream upstream;
  // A freshly started copy of the campaign's target (external targets; empty: none). Each new
  // folder's case is replayed on it once: a finding it does not reproduce depends on what the
  // campaign's long-lived target ran before (PyTorch 13, an earlier conv's zero point), and
  // its report says so, since its replay starts a fresh target too.
  std::function<std::unique_ptr<Target>()> fresh_target;
};

struct Filed {
  std::string kind;       // may differ from the case's: a sensitive kernel turns fusion to kernel
  std::string signature;  // "" for a duplicate whose bucket is not resolved yet
  std::string bucket;
  std::string pattern;  // OpChain of the minimized case, when this case was minimized and filed
  bool duplicate = false;
  bool known = false;
  // One of the bucket's first kMinimizedPerBucket cases (its own signature); the others take
  // the first one's. `fusefuzz merge` redoes this choice over all shards (report: buckets).
  bool slot = false;
};

// Files the finding `r` (blamed, not minimized) of case seed `seed`; `fired_rules` are the
// optimized run's rewrites. Throws OutputError when OUT cannot be written.
Filed FileFinding(const OutLayout& l, const FilingOptions& o, Target& target, Repro r,
                  const std::vector<std::string>& fired_rules, uint64_t seed);

// Writes the finding folder of `sig` unless it exists. Returns false for a duplicate: the folder
// is complete (has repro.json), or another worker holds the signature's lock right now. The lock
// (flock on .claims/<sig>) is released by the kernel when its holder dies. Throws OutputError.
// `answer`: the target asked once more on the case, for the report (null: without).
bool PublishFinding(const OutLayout& l, const std::string& sig, const Repro& r,
                    const TargetAnswer* answer = nullptr);

}  // namespace fusefuzz
