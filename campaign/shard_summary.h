// Reading one shard's summary.json for `fusefuzz merge` (campaign/campaign_merge.h). A shard's
// folder may come from another machine or from anyone: every field is checked, and a bad one is
// an InputError naming the file and the field's JSON pointer (exit 2), never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "report/campaign_summary.h"

namespace fusefuzz {

struct ShardFirst {
  int64_t case_index = -1;
  double seconds = -1;
};

struct ShardSummary {
  std::string dir;   // the shard's folder, as given
  std::string path;  // its summary.json
  CampaignStats stats;
  // Its "shard" record: shard `index` of `count` of a campaign of `graphs` cases (0: limited by
  // --seconds only), `cases` of them this shard's, made with `options`.
  int index = 0;
  int count = 1;
  int64_t campaign_graphs = 0;
  int64_t cases = 0;
  nlohmann::json options;
  std::map<std::string, ShardFirst> first_by_kind;  // case and seconds of each kind's first
};

// A shard summary's "buckets" (CampaignStats::buckets), checked field by field: InputError
// naming `path` and the JSON pointer. Also read when a shard is resumed.
std::map<std::string, BucketRecord> BucketsFromJson(const nlohmann::json& buckets,
                                                    const std::string& path);

// Reads DIR/summary.json of a `fuzz --shard I/N` campaign. Throws InputError naming the file and
// field: missing, of the wrong type, a signature that could not name a folder (/ or quotes),
// counts that do not add up, or a summary without a "shard" record.
ShardSummary ReadShardSummary(const std::string& dir);

}  // namespace fusefuzz
