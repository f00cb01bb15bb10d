// The Python of reproduce.py that does not depend on the finding: each mode as
// targets/pytorch/fusefuzz_torch.py, quant_modes.py, quant_fx.py and quant_observers.py run it,
// cut to what one request needs (no protocol, no rewrites), and the verdict.
#include "report/torch_script_py.h"

namespace fusefuzz {

const char* const kTorchScriptPrologue = R"PY(import math
import sys

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

nan, inf = float("nan"), float("inf")


def T(shape, values):
    return torch.tensor(values, dtype=torch.float32).reshape(shape)

)PY";

const char* const kTorchFloatFlows = R"PY(

def new_model():
    model = Graph().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def optimized(model):
    """What the mode does to the model (fusefuzz_torch.py, optimize())."""
    if MODE == "eager":
        return model
    if MODE == "fx":
        from torch.fx.experimental.optimization import fuse
        return fuse(model)
    if MODE == "fuse_fx":
        from torch.ao.quantization.quantize_fx import fuse_fx
        return fuse_fx(model)
    if MODE == "fuse_modules":
        from torch.ao.quantization import fuse_modules
        return fuse_modules(model, GROUPS) if GROUPS else model
    if MODE == "torchscript":
        return torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model)))
    raise SystemExit("unknown mode %s" % MODE)


def run(optimize):
    """(flat outputs, None): the optimized run, or the module as built (eager)."""
    model = new_model()
    module = optimized(model) if optimize else model
    with torch.no_grad():
        outs = module(*INPUTS)
    flat = []
    for t in outs:
        if t.layout != torch.strided:
            t = t.to_dense()
        flat.append(t.detach().contiguous().float().reshape(-1).tolist())
    return flat, None
)PY";

// translate.py's decompositions, written into the script only when a graph needs them.
const char* const kTorchHelpers = R"PY(
class OnnxMaxPool2d(nn.Module):
    """ONNX MaxPool with any pads below the kernel and ONNX's ceil mode: -inf padding to the
    extent of the ONNX windows, then a floor-mode max_pool2d."""

    def __init__(self, kernel, stride, pad):
        super().__init__()
        self.kernel, self.stride, self.pad = list(kernel), list(stride), list(pad)

    def forward(self, x):
        x = F.pad(x, self.pad, mode="constant", value=float("-inf"))
        return F.max_pool2d(x, self.kernel, self.stride)


class OnnxAvgPool2d(nn.Module):
    """ONNX AvgPool with any pads below the kernel: window sums of the zero-padded input
    divided by the count of cells each window counts (input, or input + declared pads)."""

    def __init__(self, kernel, stride, pad, divisor):
        super().__init__()
        self.kernel, self.stride, self.pad = list(kernel), list(stride), list(pad)
        self.register_buffer("divisor", divisor)

    def forward(self, x):
        x = F.pad(x, self.pad, mode="constant", value=0.0)
        return F.avg_pool2d(x, self.kernel, self.stride, divisor_override=1) / self.divisor


class BroadcastPReLU(nn.Module):
    """ONNX PRelu with a slope broadcast along other dims than the channel."""

    def __init__(self, slope):
        super().__init__()
        self.register_buffer("slope", slope)

    def forward(self, x):
        return torch.where(x >= 0, x, x * self.slope)


class OnnxHardSigmoid(nn.Module):
    """max(0, min(1, alpha*x + beta)) (torch's Hardsigmoid is alpha 1/6, beta 1/2 only)."""

    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha, self.beta = float(alpha), float(beta)

    def forward(self, x):
        return torch.clamp(x * self.alpha + self.beta, 0.0, 1.0)


class SingleElementNorm(nn.Module):
    """A norm whose every span is one element: (x - x) / sqrt(eps) * scale + bias."""

    def __init__(self, scale, bias, eps, rank):
        super().__init__()
        per_channel = [1, -1] + [1] * (rank - 2)
        self.register_buffer("scale", scale.reshape(per_channel))
        self.register_buffer("bias", bias.reshape(per_channel))
        self.register_buffer("sigma", torch.tensor(float(eps)).sqrt())

    def forward(self, x):
        return (x - x) / self.sigma * self.scale + self.bias

)PY";

const char* const kTorchVerdict = R"PY(

def at(i):
    """A flat index as (n, c, h, w)."""
    idx = []
    for d in reversed(DIMS):
        idx.append(i % d)
        i //= d
    return "(" + ", ".join(str(k) for k in reversed(idx)) + ")"


def outside(i, v):
    """Whether v is outside what fusefuzz's oracle admits at element i of the failing output:
    the admitted integers [LO, HI] (grid oracle) or |v - reference| <= BOUND at the worst
    element's bound."""
    if GRID:
        return not (v == math.floor(v) and LO[i] <= v <= HI[i])
    r = REFERENCE[i]
    if math.isnan(r) or math.isnan(v):
        return not (math.isnan(r) and math.isnan(v))
    return v != r and not abs(v - r) <= BOUND


def last_line(e):
    """The error's own message: TorchScript puts it last, after the traceback; torch.fx first,
    before "While executing" and the original traceback."""
    skip = ("While executing", "Original traceback", "Traceback of TorchScript", "The following")
    lines = [line for line in str(e).strip().splitlines()
             if line.strip() and not line[0].isspace() and not line.startswith(skip)]
    msg = lines[-1] if lines else ""
    return msg if msg.split(":")[0].endswith(("Error", "Exception")) else \
        "%s: %s" % (type(e).__name__, msg)


def attempt(optimize):
    try:
        outs, forms = run(optimize)
        return outs, forms, None
    except Exception as e:  # the engine failed on this graph
        return None, None, e


def main():
    torch.set_num_threads(1)
    got, forms, err = attempt(True)
    plain, _, plain_err = attempt(False)
    label = "optimized (%s)" % MODE
    if KIND == "target_error":
        if err is not None and plain_err is None:
            print("the %s run fails: %s" % (label, last_line(err)))
            print("the unoptimized run does not: the bug is there")
            return 1
        if err is None:
            print("the %s run passes: the bug is fixed (or not this one)" % label)
            return 0
        print("both runs fail (%s): cannot tell" % last_line(plain_err))
        return 2
    if plain_err is not None or err is not None:
        print("a run failed, cannot tell: %s" % last_line(plain_err or err))
        return 2
    if KIND == "unquantized":
        left = [(m, forms["forms"].get(m, "absent")) for m in forms["promised"]
                if forms["forms"].get(m) in ("float", "reference")]
        print("modules the %s backend config quantizes, and how each ran after convert_fx:" %
              ENGINE)
        for m in forms["promised"]:
            form = forms["forms"].get(m)
            print("  %s (graph node %s): %s%s" % (m, NODE_OF_MODULE[m], form,
                                                  " (%s)" % CLASSES[m] if m in CLASSES else
                                                  " (fused into the module before it)"))
        if left:
            print("%d left in float or reference form: the bug is there" % len(left))
            return 1
        print("every one quantized: the bug is fixed (or not this one)")
        return 0
    g, p = got[FAILING], plain[FAILING]
    name = OUTPUT_NAMES[FAILING]
    what = "admitted integers" if GRID else "reference"
    print("output %s %s: element, %s, %s, unoptimized" % (name, DIMS, what, label))
    order = sorted(range(len(g)), key=lambda i: -(abs(g[i] - REFERENCE[i])
                                                  if not math.isnan(g[i] - REFERENCE[i]) else inf))
    shown = order[:8] + ([WORST] if WORST not in order[:8] else [])
    for i in shown:
        ref = "[%g, %g]" % (LO[i] + 0.0, HI[i] + 0.0) if GRID else "%.9g" % REFERENCE[i]
        print("  %-14s %-16s %-16.9g %-16.9g%s" % (at(i), ref, g[i], p[i],
                                                  "  <- off" if outside(i, g[i]) else ""))
    bound = "the admitted integers" if GRID else "the oracle's bound %g" % BOUND
    print("element %s: optimized %.9g, unoptimized %.9g, %s %s" % (
        at(WORST), g[WORST], p[WORST], "t" if GRID else "reference", REFERENCE[WORST]))
    if outside(WORST, g[WORST]) and not outside(WORST, p[WORST]):
        print("the optimized run is outside %s and the unoptimized one is not: the bug is there" %
              bound)
        return 1
    print("no difference beyond %s: the bug is fixed (or not this one)" % bound)
    return 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

}  // namespace fusefuzz
