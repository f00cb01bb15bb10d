#include "targets/builtin_targets.h"

#include <cstdlib>
#include <filesystem>

#include "ir/error.h"
#include "targets/ort_releases.h"
#include "targets/subprocess.h"
#include "targets/target_spec.h"

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
        "ptq_fx_qnnpack", "ptq_eager", "ptq_eager_dataflow", "qat_fx"},
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
      {"opencv",
       {"fp32", "int8"},
       "OpenCV DNN 4.6 (Debian libopencv-dnn-dev), ONNX import, fusion on vs off; int8: "
       "Net::quantize: targets/opencv/README.md"},
      {"mlir",
       {"fp32", "int8"},
       "MLIR 22 (Debian mlir-22-tools): TOSA -> linalg -> LLVM by mlir-opt, run by mlir-runner; "
       "rules are passes; int8: QuantizeLinear/DequantizeLinear on TOSA integers: "
       "targets/mlir/README.md"},
  };
  return kTargets;
}

std::string TargetsDir() {
  const char* env = std::getenv("FUSEFUZZ_TARGETS_DIR");
  return env && *env ? env : FUSEFUZZ_TARGETS_DIR;
}

std::optional<std::string> BuiltinTargetCommand(const std::string& spec) {
  const std::optional<TargetSpec> parsed = TargetSpec::TryParse(spec);
  if (!parsed || parsed->kind() != TargetKind::kBuiltin) return std::nullopt;
  return BuiltinTargetCommand(*parsed);
}

std::string BuiltinTargetCommand(const TargetSpec& spec) {
  const std::string& engine = spec.engine();
  const std::string& mode = spec.mode();
  const std::string dir = TargetsDir();
  if (engine == "xnnpack" || engine == "armnn" || engine == "opencv" || engine == "mlir") {
    // C++ programs built beside fusefuzz when CMake found their Debian packages.
    const std::string built = "," FUSEFUZZ_MOBILE_BUILT ",";
    if (built.find("," + engine + ",") == std::string::npos) {
      throw InputError("--target",
                       engine + " target not built: CMake did not find " +
                           (engine == "xnnpack" ? "libxnnpack-dev and libpthreadpool-dev"
                            : engine == "armnn" ? "libarmnn-dev and libarmnn-cpuref-backend22"
                            : engine == "mlir"  ? "mlir-22-tools and libmlir-22"
                                                : "libopencv-dnn-dev") +
                           " (run ci/setup, then configure again)");
    }
    // Configured but not built (e.g. after ci/fuzz, which builds fusefuzz alone): say how,
    // not "exited with status 127" from the shell (issue 45, item 9).
    const std::string program =
        std::string(FUSEFUZZ_PROGRAMS_DIR) + "/fusefuzz-" + engine + "-target";
    std::error_code ec;
    if (!std::filesystem::exists(program, ec)) {
      throw InputError("--target", engine +
                                       " target not built: run `cmake --build --preset "
                                       "release --target fusefuzz-" +
                                       engine + "-target`");
    }
    return ShellQuote(program) + " --mode " + mode;
  }
  if (engine == "pytorch") {
    return "/usr/bin/python3 " + ShellQuote(dir + "/pytorch/fusefuzz_torch.py") + " --mode " + mode;
  }
  std::string ort_module;
  if (!spec.version().empty()) {
    // Another release (onnxruntime@X.Y.Z): installed on request only, outside the repository.
    const OrtVersion v = *ParseOrtVersion(spec.version());
    const std::optional<std::string> module = OrtReleaseModuleDir(v);
    if (!module) {
      throw InputError("--target", "onnxruntime-node " + v.Text() + " is not installed in " +
                                       (OrtReleasesDir().empty() ? "the cache ($HOME is not set)"
                                                                 : OrtReleasesDir()) +
                                       ": run `" + OrtInstallCommand(v) + "`");
    }
    ort_module = " --ort-module " + ShellQuote(*module);
  }
  return "node " + ShellQuote(dir + "/onnxruntime/fusefuzz-ort.js") + " --level " + mode +
         ort_module;
}

}  // namespace fusefuzz
