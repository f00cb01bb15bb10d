// The reproducer files of fusefuzz-mlir-target (repro_writer.h).
#include "targets/mlir/repro_writer.h"

#include <algorithm>
#include <cstdio>

#include "targets/mlir/tosa_writer.h"
#include "targets/subprocess.h"

namespace fusefuzz::mlir {
namespace {

constexpr char kChecker[] = R"PY(
import math, re, struct, sys
def outputs(path):
    text = open(path).read()
    parts = text.split("data =")[1:]
    return [[struct.unpack("<f", struct.pack("<i", int(v)))[0]
             for v in re.findall(r"-?\d+", p.split("Unranked Memref")[0])] for p in parts]
unopt, opt = outputs("unoptimized.txt"), outputs("optimized.txt")
fields = open("expected.txt").read().split()
if not fields:
    print("both runs completed (the finding was a failure of one of them)")
    sys.exit(0)
k, i, ref, bound = int(fields[0]), int(fields[1]), float(fields[2]), float(fields[3])
u, o = unopt[k][i], opt[k][i]
differ = sum(1 for a, b in zip(unopt[k], opt[k]) if struct.pack("<f", a) != struct.pack("<f", b))
print("output %d element %d: unoptimized %.9g optimized %.9g reference %.9g bound %.3g"
      % (k, i, u, o, ref, bound))
print("%d of %d elements differ bitwise between the two runs" % (differ, len(opt[k])))
bad = lambda v: math.isnan(v) != math.isnan(ref) or (not math.isnan(v) and abs(v - ref) > bound)
sys.exit(1 if bad(o) or bad(u) else 0)
)PY";

std::string Line(const std::string& title, const std::vector<std::string>& passes,
                 const std::string& out) {
  return "\"$MLIR/bin/mlir-opt\" graph.mlir " +
         ShellQuote("--pass-pipeline=" + PassPipeline(passes)) +
         " \\\n  | \"$MLIR/bin/mlir-runner\" -e main -entry-point-result=void "
         "\"-shared-libs=$LIBS\"" +
         " > " + out + " || { echo '" + title + " run failed'; exit 2; }\n";
}

}  // namespace

Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c,
                           const std::vector<std::string>& optimized, bool int8) {
  Reproducer rep;
  std::string expected;
  if (!c.output.empty()) {
    const auto it = std::find(r.graph.outputs.begin(), r.graph.outputs.end(), c.output);
    char buf[128];
    std::snprintf(buf, sizeof buf, "%d %lld %.17g %.17g\n", int(it - r.graph.outputs.begin()),
                  static_cast<long long>(c.index), c.reference, c.bound);
    expected = buf;
  }
  std::string passes;
  for (const std::string& p : optimized) passes += " " + p;
  std::string sh =
      "#!/usr/bin/env bash\n# " + c.title +
      "\n# Reproduced with MLIR 22 alone (Debian mlir-22-tools, libmlir-22). graph.mlir "
      "is the graph as TOSA;\n# its @main prints every output's float32 bit patterns "
      "as i32. The unoptimized run leaves out\n# the optional passes, the optimized "
      "one keeps:" +
      (passes.empty() ? std::string(" (none)") : passes) +
      "\n# Exit status: 1 while a run is outside the bound of expected.txt (the optimized run is "
      "tried\n# up to five times), 0 when fixed, 2 when MLIR fails.\nset -o pipefail\n"
      "MLIR=${MLIR_DIR:-/usr/lib/llvm-22}\n"
      "LIBS=$MLIR/lib/libmlir_runner_utils.so.22.1,$MLIR/lib/"
      "libmlir_c_runner_utils.so.22.1\ncd \"$(dirname \"$0\")\" || exit 2\n";
  sh += Line("unoptimized", {}, "unoptimized.txt");
  // The miscompiled values of a bug like llvm#210490 are whatever memory held, so one run may
  // land inside the bound by chance: the optimized run is tried up to five times.
  sh += "for attempt in 1 2 3 4 5; do\n";
  sh += Line("optimized", optimized, "optimized.txt");
  sh += "python3 - <<'PY'" + std::string(kChecker) +
        "PY\nstatus=$?\n"
        "[ \"$status\" -ne 0 ] && exit \"$status\"\ndone\nexit 0\n";
  rep.files = {
      {"graph.mlir", WriteTosaModule(r, int8)}, {"reproduce.sh", sh}, {"expected.txt", expected}};
  rep.build = "bash reproduce.sh";
  return rep;
}

}  // namespace fusefuzz::mlir
