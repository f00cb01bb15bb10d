// `fusefuzz gen --seed S [--quant] [--config FILE] [--inputs OUT.json] [--dump-config]`
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "cli/cli.h"
#include "generators/generator.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

struct GenOptions {
  uint64_t seed = 1;
  int64_t case_index = -1;
  std::string config, inputs;
  bool dump_config = false, plain = false, quant = false;
};

}  // namespace

void RegisterGen(Cli& cli) {
  auto o = std::make_shared<GenOptions>();
  auto* cmd = cli.app.add_subcommand("gen", "Print a generated graph (JSON) for a seed");
  cmd->add_option("--seed", o->seed, "generator seed (default 1)")->check(kSeed);
  cmd->add_option("--case", o->case_index,
                  "with --seed S: case I of a campaign run with base seed S");
  cmd->add_option("--config", o->config, "generator config JSON");
  cmd->add_option("--inputs", o->inputs, "also write the generated inputs to this file");
  cmd->add_flag("--quant", o->quant,
                "a quantized (QDQ) graph: the quantized generator (docs/generator.md)");
  cmd->add_flag("--plain", o->plain, "data arrays instead of base64");
  cmd->add_flag("--dump-config", o->dump_config, "print the (default or given) config and exit");
  cmd->callback([o] {
    GenConfig cfg;
    if (!o->config.empty()) cfg = ConfigFromJson(ReadJsonFile(o->config), o->config);
    if (o->quant) cfg.quant.enabled = true;
    if (o->dump_config) {
      std::cout << ConfigToJson(cfg).dump(1) << "\n";
      return;
    }
    uint64_t seed = o->case_index >= 0 ? CaseSeed(o->seed, o->case_index) : o->seed;
    GeneratedCase c = GenerateFromSeed(seed, cfg);
    WriteOptions w;
    w.plain = o->plain;
    nlohmann::json j = GraphToJson(c.graph, w);
    j["provenance"] = GenerationProvenance(seed, cfg);
    std::cout << j.dump(1) << "\n";
    if (!o->inputs.empty()) {
      MakeParentFolders(o->inputs);
      WriteFileAtomic(o->inputs, WriteTensors(c.inputs, w));
    }
  });
}

}  // namespace fusefuzz
