// `fusefuzz list ops|rules|faults|isa`
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "ir/ops.h"
#include "kernels/fast/executor.h"

namespace fusefuzz {

void RegisterList(Cli& cli) {
  auto* cmd = cli.app.add_subcommand(
      "list", "List the ops, optimizer rules, faults or the fast kernels' ISA levels");
  // Options live in a shared_ptr owned by the callback, i.e. by the app.
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "ops | rules | faults | isa")
      ->required()
      ->check(CLI::IsMember({"ops", "rules", "faults", "isa"}));
  cmd->callback([what] {
    if (*what == "ops") {
      for (Op op : AllOps()) {
        std::cout << std::left << std::setw(14) << OpName(op) << std::setw(11)
                  << FamilyName(FamilyOf(op)) << SchemaOf(op).doc << "\n";
      }
      return;
    }
    if (*what == "isa") {  // one level a line, `*` marks the active one (FUSEFUZZ_ISA to force)
      const FastIsa active = DefaultFastIsa();
      for (FastIsa isa : {FastIsa::kSse2, FastIsa::kAvx2, FastIsa::kAvx512}) {
        std::cout << (isa == active ? "* " : "  ") << std::left << std::setw(8) << FastIsaName(isa)
                  << (FastIsaAvailable(isa) ? "available" : "not available on this CPU/build")
                  << "\n";
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
