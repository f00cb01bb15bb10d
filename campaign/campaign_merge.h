// `fusefuzz merge OUT SHARD_DIR...`: the N output folders of `fuzz --shard I/N` (one per machine
// of a CI matrix or batch job) joined into the folder one campaign of the same cases would have
// written: one summary and one findings/<signature> folder per signature, counts summed, each
// folder the shard's whose first case of that signature is the campaign's lowest, signatures in
// --known counted as known. docs/campaign.md, "Spreading a campaign over machines".
#pragma once

#include <string>
#include <vector>

#include "campaign/known_signatures.h"

namespace fusefuzz {

struct MergeOptions {
  std::string out;
  std::vector<std::string> shard_dirs;
  KnownSignatures known;  // --known: counted as known, no folder
  bool force = false;     // a non-empty OUT: delete what a merge writes there first
  std::string junit;      // JUnit XML path, or empty
  std::string command_line;
};

// Returns 0 (no new findings) or 1 (new findings). Throws InputError (exit 2) for shards that do
// not add up to one campaign (other seed, target, faults, options or shard count; a shard given
// twice or missing), a malformed summary.json (naming file and field) or an unusable OUT;
// OutputError when OUT cannot be written. Partial shards (interrupted, or stopped by --seconds)
// are merged and the summary says the merge is partial.
int MergeShards(const MergeOptions& o);

}  // namespace fusefuzz
