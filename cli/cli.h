// The `fusefuzz` command line: one Register* function per subcommand (one file each), all on
// one CLI11 app. A subcommand's callback stores its exit status in `Cli::exit_code`.
// Exit status everywhere: 0 success, 1 findings/failed expectation, 2 bad input or usage.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "optimizer/optimizer.h"
#include "oracles/oracle.h"

namespace fusefuzz {

// CLI11's PositiveNumber and NonNegativeNumber answer "ten" with "not in range 0.000000 to"
// and DBL_MAX's 309 digits; these say what is wanted.
inline CLI::Validator NumberAtLeast(double lowest, bool strict, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !(strict ? v > lowest : v >= lowest)) {
          return "must be " + what + ", not '" + s + "'";
        }
        return "";
      },
      strict ? "POSITIVE" : "NONNEGATIVE");
}
// A seed: decimal digits only, at most 2^64 - 1 (CLI11 alone wraps -1 and clamps larger ones,
// silently giving another seed than the one written).
inline const CLI::Validator kSeed = CLI::Validator(
    [](std::string& s) -> std::string {
      const std::string digits = "0123456789";
      const std::string max = "18446744073709551615";
      const bool ok = !s.empty() && s.find_first_not_of(digits) == std::string::npos &&
                      (s.size() < max.size() || (s.size() == max.size() && s <= max));
      return ok ? "" : "must be an integer from 0 to 18446744073709551615, not '" + s + "'";
    },
    "");  // help keeps "--seed UINT=1"
inline const CLI::Validator kPositiveNumber = NumberAtLeast(0, true, "a positive number");
inline const CLI::Validator kNonNegativeNumber = NumberAtLeast(0, false, "a number of at least 0");

struct Cli {
  CLI::App app{"fusefuzz: differential testing and fuzzing of operator fusion", "fusefuzz"};
  int exit_code = 0;
  std::string command_line;  // argv, shell-quoted where needed (for summaries)
};

void RegisterRun(Cli& cli);
void RegisterShow(Cli& cli);
void RegisterList(Cli& cli);
void RegisterFuzz(Cli& cli);
void RegisterMerge(Cli& cli);
void RegisterGen(Cli& cli);
void RegisterCoverage(Cli& cli);
void RegisterReplay(Cli& cli);
void RegisterMinimize(Cli& cli);
void RegisterBench(Cli& cli);
void RegisterExport(Cli& cli);
void RegisterCompare(Cli& cli);
void RegisterImport(Cli& cli);
void RegisterCheck(Cli& cli);
void RegisterQuantize(Cli& cli);

// Optimizer options shared by run/show/fuzz/replay: --pipeline, --disable, --only, --inject,
// --bisect-limit. Values are stored in `opts`, which must outlive the app.
void AddOptimizerOptions(CLI::App& cmd, OptimizeOptions& opts);

// --oracle/--k/--rtol/--atol/--max-ulp; call ResolveOracleKind after parsing.
void AddOracleOptions(CLI::App& cmd, OracleOptions& o, std::string& kind);
void ResolveOracleKind(OracleOptions& o, const std::string& kind);

// Where a command that writes a folder writes it when not told: `out/<command>` below the
// working directory (out/fuzz, out/bench, out/check), created when missing (with out/ itself: a
// fresh clone has none); git ignores out/. docs/campaign.md, "Output folders".
std::string DefaultOut(const std::string& command);

// For a command that writes a set of files into --out (bench): creates the folder, and refuses
// (exit 2, naming the folder and the way out) one that already holds anything unless `force`,
// as `fuzz` refuses without --resume or --force. `own_input` is a file the command reads that
// may sit inside the folder (bench --from-json OUT/benchmarks.json re-tabulates its own run).
void PrepareOutFolder(const std::string& dir, bool force, const std::string& own_input,
                      const std::string& command);

// Creates the missing parent folders of an output file the user named (`-o out/x.json` in a
// fresh clone); a failure is left to the write, which names the path.
void MakeParentFolders(const std::string& path);

// SIGINT and SIGTERM end the command (status 128 + signal), also when it was started with them
// ignored (a background job of a non-interactive shell inherits SIGINT ignored, so Ctrl-C or
// `kill -INT` would otherwise do nothing). For commands that run for long without a campaign's
// own handler: check, bench.
void ExitOnInterrupt();

// Prints "REWRITE: (N) <rule> at <node>,<node>" for each applied rewrite (stdout).
void PrintRewrites(const std::vector<Rewrite>& rewrites);

}  // namespace fusefuzz
