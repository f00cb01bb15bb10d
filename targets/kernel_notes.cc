#include "targets/kernel_notes.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace fusefuzz {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// oneDNN's ISA names that hold VNNI: AVX2_VNNI, AVX512_CORE_VNNI and everything above
// (AVX512_CORE_BF16, AVX512_CORE_FP16, AVX512_CORE_AMX), and ALL.
bool CapHoldsVnni(std::string cap) {
  std::transform(cap.begin(), cap.end(), cap.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return cap == "ALL" || Contains(cap, "VNNI") || Contains(cap, "BF16") || Contains(cap, "FP16") ||
         Contains(cap, "AMX");
}

bool OnednnQuantMode(const std::string& spec) {
  for (const char* mode : {"ptq_fx", "ptq_eager", "qat_fx"}) {
    const std::string m = mode;
    // pytorch:MODE, or the adapter's --mode MODE in an exec: command; not ptq_fx_qnnpack.
    for (const std::string& form : {"pytorch:" + m, "--mode " + m, "--mode=" + m}) {
      const size_t at = spec.find(form);
      if (at == std::string::npos) continue;
      const size_t end = at + form.size();
      if (end == spec.size() ||
          !(std::isalnum(static_cast<unsigned char>(spec[end])) || spec[end] == '_')) {
        return spec.rfind("pytorch:", 0) == 0 || Contains(spec, "fusefuzz_torch.py");
      }
    }
  }
  return false;
}

}  // namespace

bool CpuHasVnni() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  if ((c >> 11) & 1u) return true;  // AVX512_VNNI
  // AVX_VNNI: leaf 7, subleaf 1 (a holds the highest subleaf).
  return a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && ((a >> 4) & 1u);
#else
  return false;
#endif
}

std::optional<std::string> QuantKernelNote(const std::string& spec, bool x86, bool cpu_has_vnni,
                                           const char* onednn_cap) {
  if (!x86) return std::nullopt;
  const bool ort = spec.rfind("onnxruntime", 0) == 0 || Contains(spec, "fusefuzz-ort.js");
  if (ort && !cpu_has_vnni && !Contains(spec, "x64quantprecision=1")) {
    return "this CPU has no VNNI: ONNX Runtime's u8 x s8 QLinearConv (MLAS, pmaddubsw) saturates "
           "int16 pair sums, an engine kernel defect that fusion exposes (docs/upstream-bugs.md, "
           "ORT 5); expect its findings, or run the adapter with --config "
           "session.x64quantprecision=1 (exec:node targets/onnxruntime/fusefuzz-ort.js ...)";
  }
  if (OnednnQuantMode(spec)) {
    const bool capped = onednn_cap && *onednn_cap && !CapHoldsVnni(onednn_cap);
    if (!cpu_has_vnni || capped) {
      return std::string(capped ? "oneDNN is capped below VNNI (max ISA " +
                                      std::string(onednn_cap) + ")"
                                : "this CPU has no VNNI") +
             ": oneDNN's u8 x s8 convolution (vpmaddubsw), which PyTorch's onednn engine runs, "
             "saturates int16 pair sums, an engine kernel defect (docs/upstream-bugs.md, PyTorch "
             "12); expect its findings on full-range weights (ptq_fx_qnnpack multiplies in 16 "
             "bits: no saturation)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> QuantKernelNote(const std::string& spec) {
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!cap || !*cap) cap = std::getenv("DNNL_MAX_CPU_ISA");
#if defined(__x86_64__) || defined(__i386__)
  constexpr bool kX86 = true;
#else
  constexpr bool kX86 = false;
#endif
  return QuantKernelNote(spec, kX86, CpuHasVnni(), cap);
}

}  // namespace fusefuzz
