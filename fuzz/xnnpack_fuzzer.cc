// xnnpack_fp32_fuzzer / xnnpack_int8_fuzzer (FUSEFUZZ_ENGINE_MODE): XNNPACK in-process under
// libFuzzer through the embedding API (engine_fuzzer.h), running the pack's own translation
// (targets/xnnpack/engine.h). The int8 target draws quantized graphs (`fuzz --quant`).
//
// A planted adapter fault for the tests and demonstrations of the pipeline:
// FUSEFUZZ_PLANT_XNNPACK_FAULT=RULE (one of the hello's rules, e.g. "fuse Clamp Node into
// upstream Node") corrupts every output of an optimized run in which that fusion fired, as a
// wrong fused kernel would; blame withholds the fusion and names it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz/engine_fuzzer.h"
#include "targets/xnnpack/engine.h"

namespace fusefuzz::fuzz {
namespace {

constexpr bool kInt8 = std::string_view(FUSEFUZZ_ENGINE_MODE) == "int8";

class XnnpackEngine : public FuzzEngine {
 public:
  XnnpackEngine() {
    if (std::string e = xnnpack::Initialize(); !e.empty()) {
      throw std::runtime_error("xnn_initialize: " + e);
    }
    if (const char* plant = std::getenv("FUSEFUZZ_PLANT_XNNPACK_FAULT"); plant && *plant) {
      plant_ = plant;
      bool known = false;
      std::string rules;
      const nlohmann::json hello = Hello();
      for (const auto& r : hello["rules"]) {
        known = known || r.get<std::string>() == plant_;
        rules += "\n  " + r.get<std::string>();
      }
      if (!known) {
        throw std::runtime_error("FUSEFUZZ_PLANT_XNNPACK_FAULT: '" + plant_ +
                                 "' is not a rule of this target; its rules:" + rules);
      }
    }
  }
  nlohmann::json Hello() const override { return xnnpack::Hello(kInt8); }
  NativeAnswer Run(const NativeRequest& r) override {
    NativeAnswer a = xnnpack::Run(r, kInt8);
    if (!plant_.empty() && r.optimize) {
      for (const Rewrite& w : a.rewrites) {
        if (w.rule != plant_) continue;
        // Far outside any bound: the first element of every output moves by 1 + |v|.
        for (auto& [name, t] : a.outputs) {
          if (!t.data.empty()) t.data[0] += 1.0f + std::fabs(t.data[0]);
        }
        break;
      }
    }
    return a;
  }

 private:
  std::string plant_;
};

}  // namespace
}  // namespace fusefuzz::fuzz

FUSEFUZZ_ENGINE_FUZZER([] { return std::make_unique<fusefuzz::fuzz::XnnpackEngine>(); },
                       {.quant = fusefuzz::fuzz::kInt8,
                        .known_file = "xnnpack_" FUSEFUZZ_ENGINE_MODE "_fuzzer.known"})
