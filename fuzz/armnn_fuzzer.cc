// armnn_fp32_fuzzer / armnn_int8_fuzzer (FUSEFUZZ_ENGINE_MODE): Arm NN 20.08 (CpuRef)
// in-process under libFuzzer through the embedding API (engine_fuzzer.h), running the pack's own
// translation (targets/armnn/engine.h). The int8 target draws quantized graphs (`fuzz --quant`).
// Arm NN's known FoldPadIntoConvolution2d bugs (docs/upstream-bugs.md) are listed in
// fuzz/known/armnn_*_fuzzer.known, copied beside the binary.
#include <armnn/ArmNN.hpp>
#include <memory>
#include <string>

#include "fuzz/engine_fuzzer.h"
#include "targets/armnn/engine.h"

namespace fusefuzz::fuzz {
namespace {

constexpr bool kInt8 = std::string_view(FUSEFUZZ_ENGINE_MODE) == "int8";

class ArmnnEngine : public FuzzEngine {
 public:
  ArmnnEngine() : mode_(armnn_net::ModeNamed(FUSEFUZZ_ENGINE_MODE)), engine_(Configured(mode_)) {}
  nlohmann::json Hello() const override { return armnn_net::Hello(mode_); }
  NativeAnswer Run(const NativeRequest& r) override { return engine_.Run(r); }

 private:
  // Arm NN logs every optimization at Info by default: silenced before the runtime exists.
  static armnn_net::Mode Configured(armnn_net::Mode m) {
    armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
    return m;
  }
  armnn_net::Mode mode_;
  armnn_net::Engine engine_;
};

}  // namespace
}  // namespace fusefuzz::fuzz

FUSEFUZZ_ENGINE_FUZZER([] { return std::make_unique<fusefuzz::fuzz::ArmnnEngine>(); },
                       {.quant = fusefuzz::fuzz::kInt8,
                        .known_file = "armnn_" FUSEFUZZ_ENGINE_MODE "_fuzzer.known"})
