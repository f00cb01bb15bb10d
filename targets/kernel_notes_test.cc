#include "targets/kernel_notes.h"

#include <gtest/gtest.h>

namespace fusefuzz {
namespace {

TEST(QuantKernelNote, OnnxRuntimeWithoutVnniUnlessTheExactOptionIsSet) {
  EXPECT_TRUE(QuantKernelNote("onnxruntime:all", true, false, nullptr));
  EXPECT_TRUE(QuantKernelNote("exec:node targets/onnxruntime/fusefuzz-ort.js --level all", true,
                              false, nullptr));
  EXPECT_FALSE(QuantKernelNote(
      "exec:node t/fusefuzz-ort.js --level all --config session.x64quantprecision=1", true, false,
      nullptr));
  EXPECT_FALSE(QuantKernelNote("onnxruntime:all", true, true, nullptr));
  EXPECT_FALSE(QuantKernelNote("onnxruntime:all", false, false, nullptr));  // not x86
  EXPECT_NE(QuantKernelNote("onnxruntime:disabled", true, false, nullptr)->find("ORT 5"),
            std::string::npos);
}

TEST(QuantKernelNote, OnednnModesWithoutVnniOrCappedBelowIt) {
  for (const char* spec :
       {"pytorch:ptq_fx", "pytorch:ptq_eager", "pytorch:qat_fx",
        "exec:/usr/bin/python3 targets/pytorch/fusefuzz_torch.py --mode ptq_fx"}) {
    EXPECT_TRUE(QuantKernelNote(spec, true, false, nullptr)) << spec;
    EXPECT_FALSE(QuantKernelNote(spec, true, true, nullptr)) << spec;
    EXPECT_TRUE(QuantKernelNote(spec, true, true, "AVX2")) << spec;
    EXPECT_TRUE(QuantKernelNote(spec, true, true, "avx512_core")) << spec;
    EXPECT_FALSE(QuantKernelNote(spec, true, true, "AVX512_CORE_VNNI")) << spec;
    EXPECT_FALSE(QuantKernelNote(spec, true, true, "avx512_core_amx")) << spec;
    EXPECT_FALSE(QuantKernelNote(spec, true, true, "ALL")) << spec;
  }
  // qnnpack multiplies in 16 bits; the float modes run no int8 conv.
  for (const char* spec : {"pytorch:ptq_fx_qnnpack", "pytorch:fx", "pytorch:torchscript",
                           "exec:python3 x.py --mode ptq_fx_qnnpack", "embedded"}) {
    EXPECT_FALSE(QuantKernelNote(spec, true, false, "AVX2")) << spec;
  }
  EXPECT_NE(QuantKernelNote("pytorch:ptq_fx", true, true, "AVX2")->find("max ISA AVX2"),
            std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
