// The fast executor: float32 kernels on Eigen for the whole vocabulary, FusedConv epilogues
// applied per output block. Shares no code with kernels/reference.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/verifier.h"

namespace fusefuzz {

// The instruction-set level of the kernels (docs/kernels.md, "ISA dispatch"): the compute
// kernels are compiled once per level and one copy is picked at run time.
enum class FastIsa {
  kAuto,    // the process default: FUSEFUZZ_ISA if set, else the best level this CPU runs
  kSse2,    // the baseline x86-64 build (whatever the build's -march is)
  kAvx2,    // AVX2 + FMA (x86-64-v3 vector ISA)
  kAvx512,  // AVX-512 F/BW/DQ/VL/CD + AVX2 + FMA (x86-64-v4 vector ISA)
};

struct FastOptions {
  int threads = 1;               // intra-op threads; 1 = single-threaded (default)
  FastIsa isa = FastIsa::kAuto;  // which copy of the kernels runs
};

const char* FastIsaName(FastIsa isa);  // "auto", "sse2", "avx2", "avx512"
// "sse2" | "avx2" | "avx512" (or "auto"); anything else: InputError naming `where`.
FastIsa ParseFastIsa(const std::string& name, const std::string& where);
// Compiled into this binary and runnable on this CPU (kAuto: always).
bool FastIsaAvailable(FastIsa isa);
// The levels FastIsaAvailable accepts, lowest first (never kAuto).
std::vector<FastIsa> AvailableFastIsas();
// What kAuto means in this process: the environment variable FUSEFUZZ_ISA if set (InputError if
// it names an unknown level or one this CPU or build cannot run), else the best available level.
// Decided once.
FastIsa DefaultFastIsa();
// One line for `--version` and `list isa`, never throws: e.g. "kernels avx512 (available: sse2
// avx2 avx512)" or the error of a bad FUSEFUZZ_ISA.
std::string FastIsaSummary();

// Runs a verified graph; returns the graph outputs. Throws InputError on missing/mis-shaped
// inputs. Intermediates are taken from and returned to a per-thread pool of buffers, reused
// across nodes and runs.
TensorMap RunFast(const Graph& g, const TensorMap& inputs, const FastOptions& opts = {});
// The same for a graph whose shapes VerifyGraph already gave (`shapes`): for timed loops, which
// must not time the verifier's pass over every weight (9.4 MB for ResNet-18's conv5_x).
TensorMap RunFastVerified(const Graph& g, const ShapeMap& shapes, const TensorMap& inputs,
                          const FastOptions& opts = {});

// Runs one node of a verified graph on its input tensors (in node input order); `out_shape` is
// the node's inferred output shape (InferNodeShape). For benchmarks and kernel tests.
Tensor RunFastNode(const Node& n, const std::vector<const Tensor*>& inputs, const Shape& out_shape,
                   const FastOptions& opts = {});

}  // namespace fusefuzz
