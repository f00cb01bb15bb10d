// Which copy of the kernels runs: the levels compiled in (FUSEFUZZ_ISA_DISPATCH: sse2, avx2 and
// avx512; otherwise the baseline only), what this CPU supports, and the FUSEFUZZ_ISA override.
#include <cstdlib>

#include "ir/error.h"
#include "kernels/fast/executor.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz {
namespace {

constexpr FastIsa kLevels[] = {FastIsa::kSse2, FastIsa::kAvx2, FastIsa::kAvx512};

bool CompiledIn(FastIsa isa) {
  switch (isa) {
    case FastIsa::kAuto:
    case FastIsa::kSse2:
      return true;
    case FastIsa::kAvx2:
    case FastIsa::kAvx512:
#ifdef FUSEFUZZ_ISA_DISPATCH
      return true;
#else
      return false;
#endif
  }
  return false;
}

// The runtime check mirrors the flags of each copy in CMakeLists.txt (fusefuzz_isa_copy).
bool CpuRuns(FastIsa isa) {
  switch (isa) {
    case FastIsa::kAuto:
    case FastIsa::kSse2:
      return true;
    case FastIsa::kAvx2:
    case FastIsa::kAvx512:
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
      if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
            __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))) {
        return false;
      }
      return isa == FastIsa::kAvx2 ||
             (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
              __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
              __builtin_cpu_supports("avx512cd"));
#else
      return false;
#endif
  }
  return false;
}

FastIsa ResolveDefault() {
  const char* env = std::getenv("FUSEFUZZ_ISA");
  if (env && *env) {
    const std::string where = "environment variable FUSEFUZZ_ISA";
    const FastIsa isa = ParseFastIsa(env, where);
    if (isa == FastIsa::kAuto) return AvailableFastIsas().back();
    if (!FastIsaAvailable(isa)) {
      throw InputError(where, std::string("'") + env + "': " +
                                  (CompiledIn(isa) ? "this CPU does not support it"
                                                   : "not compiled into this build"));
    }
    return isa;
  }
  return AvailableFastIsas().back();
}

}  // namespace

const char* FastIsaName(FastIsa isa) {
  switch (isa) {
    case FastIsa::kAuto:
      return "auto";
    case FastIsa::kSse2:
      return "sse2";
    case FastIsa::kAvx2:
      return "avx2";
    case FastIsa::kAvx512:
      return "avx512";
  }
  return "?";
}

FastIsa ParseFastIsa(const std::string& name, const std::string& where) {
  for (FastIsa isa : {FastIsa::kAuto, FastIsa::kSse2, FastIsa::kAvx2, FastIsa::kAvx512}) {
    if (name == FastIsaName(isa)) return isa;
  }
  throw InputError(where, "unknown ISA level '" + name + "' (expected sse2, avx2, avx512 or auto)");
}

bool FastIsaAvailable(FastIsa isa) { return CompiledIn(isa) && CpuRuns(isa); }

std::vector<FastIsa> AvailableFastIsas() {
  std::vector<FastIsa> out;
  for (FastIsa isa : kLevels) {
    if (FastIsaAvailable(isa)) out.push_back(isa);
  }
  return out;
}

FastIsa DefaultFastIsa() {
  static const FastIsa isa = ResolveDefault();  // a throw leaves it unset: it throws again
  return isa;
}

std::string FastIsaSummary() {
  std::string available;
  for (FastIsa isa : AvailableFastIsas()) available += std::string(" ") + FastIsaName(isa);
  try {
    return std::string("kernels ") + FastIsaName(DefaultFastIsa()) + " (available:" + available +
           ")";
  } catch (const InputError& e) {
    return std::string("kernels: ") + e.what();
  }
}

namespace fast {

const KernelTable& KernelsFor(FastIsa isa) {
  if (isa == FastIsa::kAuto) isa = DefaultFastIsa();
  if (!FastIsaAvailable(isa)) {
    throw InputError("fast options", std::string("ISA level ") + FastIsaName(isa) + " is " +
                                         (CompiledIn(isa) ? "not supported by this CPU"
                                                          : "not compiled into this build"));
  }
  switch (isa) {
    case FastIsa::kAuto:
    case FastIsa::kSse2:
      return *fusefuzz_fast_kernels_sse2();
#ifdef FUSEFUZZ_ISA_DISPATCH
    case FastIsa::kAvx2:
      return *fusefuzz_fast_kernels_avx2();
    case FastIsa::kAvx512:
      return *fusefuzz_fast_kernels_avx512();
#else
    case FastIsa::kAvx2:
    case FastIsa::kAvx512:
      break;
#endif
  }
  return *fusefuzz_fast_kernels_sse2();
}

}  // namespace fast
}  // namespace fusefuzz
