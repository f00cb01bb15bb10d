// What a quantized run on a target will meet on this CPU before any fusion bug: engine kernel
// defects that depend on the CPU, said once at the start of `fuzz --quant` and of `check` on a
// quantized model, so that a user on such a CPU reads the flood of findings for what it is.
#pragma once

#include <optional>
#include <string>

namespace fusefuzz {

// x86 with AVX512_VNNI or AVX_VNNI (cpuid leaf 7); false elsewhere.
bool CpuHasVnni();

// The note for `spec` (a --target spec) when its u8 x s8 kernels saturate int16 pair sums:
// ONNX Runtime's MLAS on x86 without VNNI unless the adapter runs with
// session.x64quantprecision=1 (docs/upstream-bugs.md, ORT 5), PyTorch's onednn engine (ptq_fx,
// ptq_eager, qat_fx) without VNNI or with oneDNN capped below it by `onednn_cap` (the value of
// ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA, null if unset; PyTorch 12). x86 only: `x86` false
// gives nothing.
std::optional<std::string> QuantKernelNote(const std::string& spec, bool x86, bool cpu_has_vnni,
                                           const char* onednn_cap);

// The same for this process: this CPU and this environment.
std::optional<std::string> QuantKernelNote(const std::string& spec);

}  // namespace fusefuzz
