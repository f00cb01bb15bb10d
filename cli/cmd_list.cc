// `fusefuzz list ops|rules|faults`
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "ir/ops.h"

namespace fusefuzz {

void RegisterList(Cli& cli) {
  auto* cmd = cli.app.add_subcommand("list", "List the ops, optimizer rules or faults");
  // Options live in a shared_ptr owned by the callback, i.e. by the app.
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "ops | rules | faults")
      ->required()
      ->check(CLI::IsMember({"ops", "rules", "faults"}));
  cmd->callback([what] {
    if (*what == "ops") {
      for (Op op : AllOps()) {
        std::cout << std::left << std::setw(14) << OpName(op) << std::setw(11)
                  << FamilyName(FamilyOf(op)) << SchemaOf(op).doc << "\n";
      }
      return;
    }
    const auto& infos = *what == "rules" ? ListRules() : ListFaults();
    for (const auto& r : infos) {
      std::cout << std::left << std::setw(26) << r.name << r.summary << "\n";
    }
  });
}

}  // namespace fusefuzz
