// `fusefuzz minimize REPRO.json [-o OUT.json | --folder DIR] [--budget SECONDS] [--target T |
// --trust-target] [-v]`: shrinks a reproducer while it keeps failing with the same kind and
// blamed rule (docs/minimizer.md).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/cli.h"
#include "harness/minimize.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "report/finding_writer.h"

namespace fusefuzz {
namespace {

struct MinimizeCmdOptions {
  std::string repro;
  std::string output;
  std::string folder;
  double budget = 10;
  int64_t max_tests = 0;
  std::string target;
  bool trust_target = false;
  bool verbose = false;
};

// "x.json" -> "x.min.json"
std::string DefaultOutput(const std::string& path) {
  const std::string ext = ".json";
  if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) {
    return path.substr(0, path.size() - ext.size()) + ".min.json";
  }
  return path + ".min.json";
}

}  // namespace

void RegisterMinimize(Cli& cli) {
  auto o = std::make_shared<MinimizeCmdOptions>();
  auto* cmd = cli.app.add_subcommand(
      "minimize", "Shrink a reproducer while it keeps failing with the same kind and rule");
  cmd->add_option("repro", o->repro, "reproducer JSON file")->required();
  cmd->add_option("-o,--output", o->output,
                  "write the minimized reproducer here (default: REPRO.min.json)");
  // Scripts that collect findings outside a campaign (ci/fuzz --libfuzzer) get the same folder
  // a campaign writes.
  cmd->add_option("--folder", o->folder,
                  "write a finding folder instead: DIR/repro.json, report.md, before/after.dot "
                  "(and SVG)")
      ->excludes("-o");
  cmd->add_option("--budget", o->budget, "time budget in seconds (<= 0: none; default 10)");
  cmd->add_option("--max-tests", o->max_tests,
                  "stop after this many candidate replays (0: no limit; deterministic)")
      ->check(kNonNegativeNumber);
  cmd->add_option("--target", o->target, "run on this target instead of the recorded one");
  cmd->add_flag("--trust-target", o->trust_target,
                "run a recorded exec: target (a shell command from the file); without it or "
                "--target such a reproducer is refused");
  cmd->add_flag("-v,--verbose", o->verbose, "one line per accepted reduction on stderr");
  cmd->callback([o, &cli] {
    Repro r = ReadReproFile(o->repro);
    // The minimized reproducer records the target it was minimized on.
    r.target = ReproTargetSpec(r, o->repro, o->target, o->trust_target);
    std::unique_ptr<Target> target = MakeTarget(r.target);
    MinimizeOptions mo;
    mo.budget_seconds = o->budget;
    mo.max_tests = o->max_tests;
    mo.verbose = o->verbose;
    MinimizeStats st;
    Repro m = Minimize(r, *target, mo, &st);
    if (!st.reproduced) {
      std::fprintf(stderr, "fusefuzz minimize: %s: %s; nothing written\n", o->repro.c_str(),
                   st.note.c_str());
      cli.exit_code = 1;
      return;
    }
    std::string out;
    if (!o->folder.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o->folder, ec);
      if (ec) throw InputError(o->folder, "cannot create the folder: " + ec.message());
      const TargetAnswer answer = AskTarget(*target, m);
      WriteFindingFolder(o->folder, m, "", &answer);
      out = o->folder + "/repro.json";
    } else {
      out = o->output.empty() ? DefaultOutput(o->repro) : o->output;
      MakeParentFolders(out);
      WriteFileAtomic(out, WriteRepro(m, out));
    }
    std::printf("nodes %lld -> %lld\n", static_cast<long long>(st.nodes_before),
                static_cast<long long>(st.nodes_after));
    std::printf("channels %lld -> %lld\n", static_cast<long long>(st.channels_before),
                static_cast<long long>(st.channels_after));
    std::printf("spatial %lldx%lld -> %lldx%lld\n", static_cast<long long>(st.height_before),
                static_cast<long long>(st.width_before), static_cast<long long>(st.height_after),
                static_cast<long long>(st.width_after));
    std::printf("elements %lld -> %lld\n", static_cast<long long>(st.elements_before),
                static_cast<long long>(st.elements_after));
    std::printf("queries %lld (%lld candidates replayed, %lld kept)\n",
                static_cast<long long>(st.queries), static_cast<long long>(st.tests),
                static_cast<long long>(st.accepted));
    std::printf("seconds %.2f%s\n", st.seconds,
                st.budget_exhausted ? " (budget exhausted before the fixpoint)" : "");
    std::printf("wrote %s\n", out.c_str());
  });
}

}  // namespace fusefuzz
