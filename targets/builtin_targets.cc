#include "targets/builtin_targets.h"

#include <algorithm>
#include <cstdlib>

#include "ir/error.h"
#include "targets/subprocess.h"

#ifndef FUSEFUZZ_PROGRAMS_DIR
#define FUSEFUZZ_PROGRAMS_DIR "."
#endif
#ifndef FUSEFUZZ_MOBILE_BUILT
#define FUSEFUZZ_MOBILE_BUILT ""
#endif
#ifndef FUSEFUZZ_TARGETS_DIR
#define FUSEFUZZ_TARGETS_DIR "targets"
#endif

namespace fusefuzz {
const std::vector<BuiltinTarget>& BuiltinTargets() {
  static const std::vector<BuiltinTarget> kTargets = {
      {"pytorch",
       {"eager", "fx", "fuse_fx", "fuse_modules", "torchscript", "mobile", "trace", "ptq_fx",
        "ptq_fx_qnnpack", "ptq_eager", "qat_fx"},
       "PyTorch (Debian python3-torch, /usr/bin/python3): the graph as a torch.fx GraphModule; "
       "modes per targets/pytorch/README.md"},
      {"onnxruntime",
       {"all", "extended", "basic", "disabled"},
       "ONNX Runtime (npm onnxruntime-node, installed by ci/setup): graphOptimizationLevel"},
      {"xnnpack",
       {"fp32", "int8"},
       "XNNPACK (Debian libxnnpack-dev), subgraph API, NHWC: targets/xnnpack/README.md"},
      {"armnn",
       {"fp32", "fp16", "bf16", "int8"},
       "Arm NN 20.08 (Debian libarmnn-dev), CpuRef; fp16/bf16: OptimizerOptions reductions, "
       "judged at that precision: targets/armnn/README.md"},
  };
  return kTargets;
}

std::string TargetsDir() {
  const char* env = std::getenv("FUSEFUZZ_TARGETS_DIR");
  return env && *env ? env : FUSEFUZZ_TARGETS_DIR;
}

std::optional<std::string> BuiltinTargetCommand(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string engine = spec.substr(0, colon);
  for (const BuiltinTarget& t : BuiltinTargets()) {
    if (t.engine != engine) continue;
    std::string mode = colon == std::string::npos ? t.modes.front() : spec.substr(colon + 1);
    if (std::find(t.modes.begin(), t.modes.end(), mode) == t.modes.end()) {
      std::string all;
      for (const auto& m : t.modes) all += (all.empty() ? "" : ", ") + m;
      throw InputError("--target",
                       "unknown " + engine + " mode '" + mode + "' (one of: " + all + ")");
    }
    const std::string dir = TargetsDir();
    if (engine == "xnnpack" || engine == "armnn") {
      // C++ programs built beside fusefuzz when CMake found their Debian packages.
      const std::string built = "," FUSEFUZZ_MOBILE_BUILT ",";
      if (built.find("," + engine + ",") == std::string::npos) {
        throw InputError("--target",
                         engine + " target not built: CMake did not find " +
                             (engine == "xnnpack" ? "libxnnpack-dev and libpthreadpool-dev"
                                                  : "libarmnn-dev and libarmnn-cpuref-backend22") +
                             " (run ci/setup, then configure again)");
      }
      return ShellQuote(std::string(FUSEFUZZ_PROGRAMS_DIR) + "/fusefuzz-" + engine + "-target") +
             " --mode " + mode;
    }
    if (engine == "pytorch") {
      return "/usr/bin/python3 " + ShellQuote(dir + "/pytorch/fusefuzz_torch.py") + " --mode " +
             mode;
    }
    return "node " + ShellQuote(dir + "/onnxruntime/fusefuzz-ort.js") + " --level " + mode;
  }
  return std::nullopt;
}

}  // namespace fusefuzz
