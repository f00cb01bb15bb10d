#include "targets/repro_program.h"

#include <cmath>
#include <cstdio>

namespace fusefuzz {

std::string ExactLiteral(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

std::string VerdictTail(const std::string& engine, const std::string& buffer, int64_t at, size_t n,
                        const std::string& order, const ReproducerCase& c) {
  const std::string i = std::to_string(c.index);
  return "  const double got = " + buffer + "[" + std::to_string(at) + "];\n" +
         "  const double want = " + ExactLiteral(c.reference) +
         ", bound = " + ExactLiteral(c.bound) + ";\n" + "  std::printf(\"output '" + c.output +
         "' element " + i + " (NCHW): " + engine +
         " %.9g, reference %.9g, |difference| %.3g, allowed %.3g\\n\", got, want, "
         "std::fabs(got - want), bound);\n" +
         "  if (" + std::to_string(n) + " <= 64) {\n" + "    std::printf(\"the whole output, " +
         order + " order: " + engine + " | reference\\n\");\n" + "    for (size_t i = 0; i < " +
         std::to_string(n) + "; ++i) std::printf(\"  [%zu] %.9g | %.9g\\n\", i, double(" + buffer +
         "[i]), double(expected[i]));\n  }\n" +
         "  const bool wrong = !(std::fabs(got - want) <= bound) && !(std::isnan(got) && "
         "std::isnan(want));\n"
         "  std::printf(wrong ? \"BUG: outside the bound\\n\" : \"within the bound\\n\");\n"
         "  return wrong ? 1 : 0;\n}\n";
}

std::string RanTail(const std::string& engine, const std::string& buffer,
                    const std::string& output) {
  return "  std::printf(\"" + engine + " ran the case without failing; output '" + output +
         "' starts %.9g (reference %.9g)\\n\", double(" + buffer +
         "[0]), double(expected[0]));\n  return 0;\n}\n";
}

}  // namespace fusefuzz
