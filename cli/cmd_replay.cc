// `fusefuzz replay FILE|DIR... [--expect fail|pass] [--without-faults] [--target T |
// --trust-target] [--timeout S] [--disable RULE] [--versions onnxruntime@A..B:LEVEL]`
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/replay_versions.h"
#include "harness/minimize.h"
#include "ir/error.h"
#include "targets/rule_names.h"

namespace fusefuzz {
namespace {

struct ReplayOptions {
  std::vector<std::string> paths;
  std::string expect = "fail";
  bool without_faults = false;
  std::string target;
  TargetSettings target_settings;
  std::vector<std::string> disable;
  bool trust_target = false;
  bool verbose = false;
  std::string versions;
};

// Reproducer files under a directory: `repro.json` and `*.repro.json`, sorted.
std::vector<std::string> Expand(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(path, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string name = it->path().filename().string();
    // Any file so named, not only regular ones: a FIFO or device is then refused by the reader,
    // naming it, rather than skipped without a word.
    std::error_code kind_ec;
    if (!it->is_directory(kind_ec) &&
        (name == "repro.json" || (name.size() > 11 && name.ends_with(".repro.json")))) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) throw InputError(path, "no reproducer files (repro.json, *.repro.json) here");
  return out;
}

}  // namespace

void RegisterReplay(Cli& cli) {
  auto o = std::make_shared<ReplayOptions>();
  auto* cmd = cli.app.add_subcommand(
      "replay", "Re-run reproducers; check they still fail (same kind and rule) or now pass");
  cmd->add_option("paths", o->paths, "reproducer files or folders")->required();
  cmd->add_option("--expect", o->expect,
                  "fail (default): same finding again; pass: verdict PASS (MISTRUSTED is not one)")
      ->check(CLI::IsMember({"fail", "pass"}));
  cmd->add_flag("--without-faults", o->without_faults,
                "drop the reproducer's injected faults (a fault's case must then pass)");
  cmd->add_option("--target", o->target, "run on this target instead of the recorded one");
  // External targets that load a large runtime (PyTorch: seconds to import) need more time for
  // their first answer than the default.
  cmd->add_option("--timeout", o->target_settings.timeout_seconds,
                  "seconds per case for an external target (default 10)")
      ->check(kPositiveNumber);
  cmd->add_option("--disable", o->disable,
                  "also disable these rules (or faults): `--disable RULE --expect pass` confirms "
                  "a blamed rule")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("NAME,...");
  cmd->add_flag("--trust-target", o->trust_target,
                "run a recorded exec: target (a shell command from the file); without it or "
                "--target such a reproducer is refused");
  cmd->add_flag("-v,--verbose", o->verbose, "print the blame log");
  cmd->add_option("--versions", o->versions,
                  "replay on every installed ONNX Runtime release in onnxruntime@A..B[:LEVEL] "
                  "(oldest first): the verdict on each, the first bad and first good release "
                  "(docs/onnx.md)")
      ->type_name("onnxruntime@A..B:LEVEL");
  cmd->callback([o, &cli] {
    std::vector<std::string> files;
    for (const auto& p : o->paths) {
      auto e = Expand(p);
      files.insert(files.end(), e.begin(), e.end());
    }
    if (!o->versions.empty()) {
      if (!o->target.empty() || !o->disable.empty() || o->without_faults) {
        throw InputError("--versions",
                         "takes no --target, --disable or --without-faults: each "
                         "release is the target, the recorded case unchanged");
      }
      ReplayVersions(files, o->versions, o->target_settings, o->verbose);
      cli.exit_code = 0;
      return;
    }
    int met = 0;
    for (const auto& f : files) {
      Repro r = ReadReproFile(f);
      if (o->without_faults) r.opt.inject.clear();
      r.target = ReproTargetSpec(r, f, o->target, o->trust_target);
      r.opt.disable.insert(r.opt.disable.end(), o->disable.begin(), o->disable.end());
      std::unique_ptr<Target> target;
      try {
        target = MakeTarget(r.target, o->target_settings);
      } catch (const InputError& e) {
        // A relative program in an exec: target resolves only from where the campaign ran.
        std::error_code ec;
        if (r.working_dir.empty() || r.working_dir == std::filesystem::current_path(ec).string())
          throw;
        throw InputError(e.where(), e.problem() + " (the reproducer " + f + " was recorded in '" +
                                        r.working_dir + "': run from there, or give --target)");
      }
      // The names given here, not the recorded ones (those are the target's, as it reported them).
      OptimizeOptions given;
      given.disable = o->disable;
      CheckRuleNames(target->caps(), given, "--disable");
      ReplayOutcome out = ReplayCase(r, r.graph, r.inputs, *target);
      // A pass is a PASS: MISTRUSTED (the data cannot tell) and UNSUPPORTED (not run) confirm
      // nothing, so `--disable RULE --expect pass` cannot confirm a rule on such data.
      bool ok = o->expect == "fail" ? out.same_finding : out.outcome.verdict == Verdict::kPass;
      met += ok;
      std::string got = out.outcome.finding()
                            ? std::string(FindingKindName(out.outcome.kind)) +
                                  (out.blame.rule.empty() ? "" : " " + out.blame.rule)
                            : "no finding";
      std::cout << (ok ? "OK    " : "FAIL  ") << f << ": " << VerdictName(out.outcome.verdict)
                << ", " << got << " (expected "
                << (o->expect == "fail" ? std::string(FindingKindName(r.kind)) +
                                              (r.blame.rule.empty() ? "" : " " + r.blame.rule)
                                        : std::string("PASS"))
                << ")\n";
      if (o->expect == "pass" && !ok && !out.outcome.finding()) {
        std::cout << "      " << VerdictName(out.outcome.verdict) << " is not a pass: "
                  << (out.outcome.verdict == Verdict::kMistrusted
                          ? "the data cannot tell a correct result from a wrong one here ("
                          : "the case was not judged (")
                  << (out.outcome.run.status == RunStatus::kOk ? out.outcome.oracle.detail
                                                               : out.outcome.run.message)
                  << ")\n";
      }
      if (o->verbose) {
        for (const auto& l : out.blame.log) std::cout << "  " << l << "\n";
        if (!out.outcome.oracle.detail.empty())
          std::cout << "  " << out.outcome.oracle.detail << "\n";
      }
    }
    std::cout << met << "/" << files.size() << " reproducers met the expectation\n";
    cli.exit_code = met == static_cast<int>(files.size()) ? 0 : 1;
  });
}

}  // namespace fusefuzz
