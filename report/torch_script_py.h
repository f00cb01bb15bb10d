// The fixed Python of reproduce.py (report/torch_script.cc writes the finding's data around it):
// what each mode of targets/pytorch/fusefuzz_torch.py does, written out for torch alone. Nothing
// of a graph is ever part of these texts; the data they read are literals the generator writes.
#pragma once

namespace fusefuzz {

// Imports, `nan`/`inf` names and the tensor constructor T(shape, values).
extern const char* const kTorchScriptPrologue;
// translate.py's decompositions (OnnxMaxPool2d, OnnxAvgPool2d, BroadcastPReLU,
// OnnxHardSigmoid, SingleElementNorm), written only when a graph needs them.
extern const char* const kTorchHelpers;
// optimized(model) / unoptimized(): the float modes (eager, fx, fuse_fx, fuse_modules,
// torchscript); reads MODE and GROUPS.
extern const char* const kTorchFloatFlows;
// The FX quantization flows (ptq_fx, ptq_fx_qnnpack, qat_fx) with the adapter's observers
// (targets/pytorch/quant_observers.py) and the simulated unoptimized run; reads MODE, POINTS,
// COMMUTING, WEIGHT_GRIDS, WEIGHT_MODULES, CALLS, INPUT_VARS, INT_INPUTS, INT_OUTPUTS,
// DQ_OUTPUTS (report/torch_quant_py.cc).
extern const char* const kTorchQuantFlows;
// The verdict: runs both, prints the failing output's worst elements or the error, exits 1 /
// 0 / 2; reads KIND, FAILING, WORST, BOUND, REFERENCE, LO, HI, DIMS, OUTPUT_NAMES.
extern const char* const kTorchVerdict;

}  // namespace fusefuzz
