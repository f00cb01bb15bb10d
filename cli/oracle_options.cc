// --oracle, --k, --rtol, --atol, --max-ulp: shared by fuzz and replay.
#include "cli/cli.h"

namespace fusefuzz {

void AddOracleOptions(CLI::App& cmd, OracleOptions& o, std::string& kind) {
  cmd.add_option("--oracle", kind, "bound | allclose | ulp")
      ->default_str("bound")
      ->check(CLI::IsMember({"bound", "allclose", "ulp"}));
  cmd.add_option("--k", o.k, "bound oracle: fixed factor instead of the one derived from the graph")
      ->check(CLI::PositiveNumber)
      ->default_str("derived");
  cmd.add_option("--rtol", o.rtol, "allclose: relative tolerance")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--atol", o.atol, "allclose: absolute tolerance")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--max-ulp", o.max_ulp, "ulp: largest accepted float32 ulp distance")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

void ResolveOracleKind(OracleOptions& o, const std::string& kind) {
  if (!kind.empty()) o.kind = *OracleKindFromName(kind);
}

}  // namespace fusefuzz
