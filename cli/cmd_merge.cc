// `fusefuzz merge OUT SHARD_DIR...`: the folders of `fuzz --shard I/N` joined into one campaign's
// (campaign/campaign_merge.h).
#include <memory>

#include "campaign/campaign_merge.h"
#include "cli/cli.h"

namespace fusefuzz {

void RegisterMerge(Cli& cli) {
  auto o = std::make_shared<MergeOptions>();
  auto known = std::make_shared<std::string>();
  auto* cmd = cli.app.add_subcommand(
      "merge",
      "Join the output folders of `fuzz --shard I/N` (N machines) into one campaign's: one "
      "summary, one folder per signature");
  cmd->add_option("out", o->out, "folder for the merged campaign (new or empty)")->required();
  cmd->add_option("shards", o->shard_dirs, "the N shards' --out folders, each once")->required();
  cmd->add_option("--known", *known,
                  "baseline: a summary.json (or campaign folder) or a file of signatures; "
                  "matching findings are counted as known, not new, and get no folder");
  cmd->add_option("--junit", o->junit, "also write JUnit XML here");
  cmd->add_flag("--force", o->force,
                "OUT is not empty: delete the findings and summary a merge wrote there first");
  cmd->callback([o, known, &cli] {
    MergeOptions m = *o;
    if (!known->empty()) m.known = ReadKnownSignatures(*known);
    m.command_line = cli.command_line;
    cli.exit_code = MergeShards(m);
  });
}

}  // namespace fusefuzz
