// `fusefuzz list ops|rules|faults|targets|isa|spellings [--target T]`
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "ir/ops.h"
#include "ir/spelling.h"
#include "kernels/fast/executor.h"
#include "targets/builtin_targets.h"
#include "targets/ort_releases.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

// Each target by the name --target takes, whether it starts here (its adapter says hello) and
// what it says it is: name, engine version, ops, capabilities.
void ListTargets() {
  std::vector<std::string> specs = {EmbeddedSpecText()};
  for (const BuiltinTarget& t : BuiltinTargets()) {
    for (const std::string& mode : t.modes) specs.push_back(t.engine + ":" + mode);
  }
  // ONNX Runtime releases installed beside the pinned one, at level all (docs/onnx.md).
  const std::vector<OrtVersion> releases = InstalledOrtReleases();
  for (const OrtVersion& v : releases) specs.push_back("onnxruntime@" + v.Text() + ":all");
  TargetSettings settings;
  settings.timeout_seconds = 30;
  // The column as wide as the longest name and two spaces ("pytorch:ptq_eager_dataflowok").
  size_t width = 0;
  for (const std::string& spec : specs) width = std::max(width, spec.size() + 2);
  for (const std::string& spec : specs) {
    std::cout << std::left << std::setw(static_cast<int>(width)) << spec;
    try {
      std::unique_ptr<Target> t = MakeTarget(spec, settings);
      const TargetCaps& c = t->caps();
      std::string caps;
      if (c.bisect_limit) caps += " bisect_limit";
      if (c.disable) caps += " disable";
      if (c.inject) caps += " inject";
      if (c.reports_rewrites) caps += " rewrites";
      if (c.onnx) caps += " onnx";
      if (c.onnx_only) caps += " onnx_only";
      if (c.bench) caps += " bench";
      std::cout << "ok  " << (c.engine.empty() ? "fusefuzz " FUSEFUZZ_VERSION : c.engine) << ", "
                << c.ops.size() << " ops, capabilities:" << (caps.empty() ? " none" : caps)
                << (c.precision == Precision::kFloat32
                        ? std::string()
                        : ", precision " + std::string(PrecisionName(c.precision)))
                << (c.quantize_rounding == QuantizeRounding::kHalfEven
                        ? std::string()
                        : ", quantize rounding " +
                              std::string(QuantizeRoundingName(c.quantize_rounding)));
      std::string limits;
      for (const auto& [name, why] : c.limits) limits += " " + name;
      if (!limits.empty()) std::cout << ", cannot:" << limits;
      std::cout << "\n";
    } catch (const std::exception& e) {
      std::cout << "unavailable: " << e.what() << "\n";
    }
  }
  std::cout << "\nexec:CMD runs any program that speaks docs/target-protocol.md; adapters in "
            << TargetsDir() << "\n";
  std::cout << "onnxruntime@X.Y.Z:LEVEL runs another onnxruntime-node release ("
            << (releases.empty() ? "none" : std::to_string(releases.size())) << " installed in "
            << (OrtReleasesDir().empty() ? "the cache" : OrtReleasesDir()) << "; install one with "
            << TargetsDir()
            << "/onnxruntime/install-release.sh X.Y.Z; what each release cannot do: docs/onnx.md, "
               "\"Testing another release\")\n";
}

// Each spelling a line: name, the ops it writes, who writes it (torch: the PyTorch adapter; onnx:
// fusefuzz's ONNX export), what it writes. With a target: only the spellings it gets.
void ListSpellings(const std::string& target) {
  std::set<std::string> only;
  if (!target.empty()) {
    TargetSettings settings;
    settings.timeout_seconds = 30;
    only = TargetSpellings(MakeTarget(target, settings)->caps());
  }
  size_t count = 0;
  for (const SpellingInfo& i : AllSpellings()) {
    if (!target.empty() && !only.count(std::string(i.name))) continue;
    ++count;
    std::cout << std::left << std::setw(30) << std::string(i.name) + " " << std::setw(6)
              << SpellingFamilyName(i.family) << " " << std::setw(20) << std::string(i.ops) + " "
              << i.doc << "\n";
  }
  if (count == 0) std::cout << "(no spellings" << (target.empty() ? "" : " for " + target) << ")\n";
}

}  // namespace

void RegisterList(Cli& cli) {
  auto* cmd = cli.app.add_subcommand(
      "list",
      "List the ops, optimizer rules, faults, targets, the fast kernels' ISA levels or spellings");
  // Options live in a shared_ptr owned by the callback, i.e. by the app.
  auto what = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>();
  cmd->add_option("what", *what, "ops | rules | faults | targets | isa | spellings")
      ->required()
      ->check(CLI::IsMember({"ops", "rules", "faults", "targets", "isa", "spellings"}));
  cmd->add_option("--target", *target, "spellings: only those this target gets");
  cmd->callback([what, target] {
    if (*what == "spellings") {
      ListSpellings(*target);
      return;
    }
    if (*what == "targets") {
      ListTargets();
      return;
    }
    if (*what == "ops") {
      for (Op op : AllOps()) {
        std::cout << std::left << std::setw(18) << OpName(op) << std::setw(11)
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
      // At least one space: scripts split the name off the first column (`awk '{print $1}'`).
      std::cout << std::left << std::setw(26) << r.name + " " << r.summary << "\n";
    }
  });
}

}  // namespace fusefuzz
