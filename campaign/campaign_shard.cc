// --shard I/N (campaign/campaign.h): parsing, the shard's share of the cases, and the options a
// shard's summary records so that `fusefuzz merge` can refuse shards of different campaigns.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "campaign/campaign.h"
#include "campaign/campaign_internal.h"
#include "generators/gen_config.h"
#include "ir/error.h"

namespace fusefuzz {

void ParseShard(const std::string& text, int* shard, int* shards) {
  const size_t slash = text.find('/');
  auto number = [&](const std::string& part, int64_t* v) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != part.npos)
      return false;
    *v = std::stoll(part);
    return true;
  };
  int64_t i = 0, n = 0;
  if (slash == text.npos || !number(text.substr(0, slash), &i) ||
      !number(text.substr(slash + 1), &n)) {
    throw InputError("--shard",
                     "must be I/N (this run's shard I of N, counted from 0: 0/4 .. "
                     "3/4), not '" +
                         text + "'");
  }
  if (n < 1 || n > kMaxShards) {
    throw InputError("--shard",
                     "'" + text + "': N must be from 1 to " + std::to_string(kMaxShards));
  }
  if (i >= n) {
    throw InputError("--shard", "'" + text +
                                    "': I must be less than N (shards are counted from "
                                    "0: the last of " +
                                    std::to_string(n) + " is " + std::to_string(n - 1) + "/" +
                                    std::to_string(n) + ")");
  }
  *shard = static_cast<int>(i);
  *shards = static_cast<int>(n);
}

int64_t ShardCases(int64_t graphs, int shard, int shards) {
  return graphs > shard ? (graphs - shard + shards - 1) / shards : 0;
}

namespace campaign_internal {

// The options besides seed, target and faults (which the summary records anyway) that decide
// which cases are findings and how they are filed: shards that differ here do not add up to one
// campaign, and `fusefuzz merge` refuses them, naming the key.
nlohmann::json ShardOptions(const CampaignOptions& o) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the generator's configuration
  for (unsigned char c : ConfigToJson(o.gen).dump()) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  const OracleOptions& orc = o.check.oracle;
  return {{"generator_config", hex},
          {"quant", o.gen.quant.enabled},
          {"oracle",
           {{"kind", OracleKindName(orc.kind)},
            {"k", orc.k},
            {"rtol", orc.rtol},
            {"atol", orc.atol},
            {"max_ulp", orc.max_ulp}}},
          {"pipeline", o.check.opt.pipeline},
          {"disable", o.check.opt.disable},
          {"only", o.check.opt.only},
          {"bisect_limit", o.check.opt.bisect_limit},
          {"kernel_check", o.check.kernel_check},
          {"minimize", o.minimize},
          {"minimize_budget", o.minimize_budget},
          {"sensitivity_check", o.sensitivity_check},
          {"known_signatures", o.known.size()},
          {"timeout", o.target_settings.timeout_seconds},
          {"case_timeout", o.case_timeout}};
}

}  // namespace campaign_internal
}  // namespace fusefuzz
