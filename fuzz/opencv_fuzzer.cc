// opencv_fp32_fuzzer / opencv_int8_fuzzer (FUSEFUZZ_ENGINE_MODE): OpenCV DNN in-process under
// libFuzzer through the embedding API (engine_fuzzer.h), running the pack's own translation
// (targets/opencv/engine.h, opencv_net.h: the graph exported as ONNX, imported by
// readNetFromONNX, run with fusion on and off). Both draw float graphs: the int8 target, as the
// pack's opencv:int8, quantizes them with OpenCV's own Net::quantize and compares the integers
// fused and unfused (targets/opencv/README.md; OpenCV 4.6 runs QDQ graphs wrongly).
#include <memory>
#include <string>

#include "fuzz/engine_fuzzer.h"
#include "targets/opencv/engine.h"
#include "targets/opencv/opencv_net.h"

namespace fusefuzz::fuzz {
namespace {

constexpr bool kInt8 = std::string_view(FUSEFUZZ_ENGINE_MODE) == "int8";

class OpencvEngine : public FuzzEngine {
 public:
  nlohmann::json Hello() const override { return opencv::Hello(kInt8); }
  NativeAnswer Run(const NativeRequest& r) override { return opencv::Run(r, kInt8); }
};

}  // namespace
}  // namespace fusefuzz::fuzz

FUSEFUZZ_ENGINE_FUZZER([] { return std::make_unique<fusefuzz::fuzz::OpencvEngine>(); },
                       {.quant = false,
                        .known_file = "opencv_" FUSEFUZZ_ENGINE_MODE "_fuzzer.known"})
