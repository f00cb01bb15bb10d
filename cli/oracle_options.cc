// --oracle, --k, --rtol, --atol, --max-ulp: shared by fuzz and replay.
#include <cstdlib>

#include "cli/cli.h"

namespace fusefuzz {

namespace {

// The same rule as reproducer files (OracleParamProblem).
CLI::Validator OracleParam(const std::string& name) {
  return CLI::Validator(
      [name](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0') return "not a number: " + text;
        std::string problem = OracleParamProblem(name, v);
        return problem.empty() ? "" : "--" + name + " " + problem + ", got " + text;
      },
      "", name);
}

}  // namespace

void AddOracleOptions(CLI::App& cmd, OracleOptions& o, std::string& kind) {
  cmd.add_option("--oracle", kind,
                 "bound | allclose | ulp | sigma | grid (integer-valued outputs are always judged "
                 "on their grid; grid: float outputs by the bound)")
      ->default_str("bound")
      ->check(CLI::IsMember({"bound", "allclose", "ulp", "sigma", "grid"}));
  cmd.add_option("--k", o.k,
                 "bound: fixed factor instead of the one derived from the graph; sigma: the "
                 "number of error scales allowed (default 8)")
      ->check(OracleParam("k"))
      ->default_str("derived");
  cmd.add_option("--rtol", o.rtol, "allclose: relative tolerance")
      ->check(OracleParam("rtol"))
      ->capture_default_str();
  cmd.add_option("--atol", o.atol, "allclose: absolute tolerance")
      ->check(OracleParam("atol"))
      ->capture_default_str();
  cmd.add_option("--max-ulp", o.max_ulp, "ulp: largest accepted float32 ulp distance")
      ->check(OracleParam("max_ulp"))
      ->capture_default_str();
}

void ResolveOracleKind(OracleOptions& o, const std::string& kind) {
  if (!kind.empty()) o.kind = *OracleKindFromName(kind);
}

}  // namespace fusefuzz
