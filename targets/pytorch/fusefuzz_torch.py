#!/usr/bin/python3
"""PyTorch as a fusefuzz target: the line-delimited JSON protocol of docs/target-protocol.md.

    fusefuzz fuzz --target "exec:/usr/bin/python3 targets/pytorch/fusefuzz_torch.py --mode fx"

Each request's graph becomes a torch.fx GraphModule in float32 (translate.py), optimized by the
chosen mode and run on one thread. A request with optimize=false runs the module as built
(eager), which is fusefuzz's kernel check. A timing request (capability bench) runs the prepared
module warmup times, then times each of runs calls under torch.no_grad on one thread. See
README.md.
"""

import argparse
import importlib.metadata
import json
import os
import sys
import time

# The hello goes out before torch is imported: importing torch takes seconds (tens on a loaded
# machine), and the op list needs none of it.
OPS = ["Conv", "FusedConv", "BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "Relu",
       "Relu6", "Clip", "LeakyRelu", "PRelu", "Elu", "Sigmoid", "HardSigmoid", "Tanh", "Silu",
       "HardSwish", "Gelu", "Add", "Sub", "Mul", "Div", "Pad", "MaxPool", "AvgPool",
       "GlobalAvgPool", "Concat", "Identity", "Flatten", "Reshape", "Gemm", "MatMul",
       "ReduceMean", "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Min", "Max", "ReduceSum",
       "ReduceMax", "Softmax", "Transpose"]
# Ops of ir/ops.def this adapter leaves out of its hello (so fusefuzz never sends them), with
# the reason; test_translate.py checks that OPS and these cover ops.def exactly.
# The float modes leave the quantized ops to the quantization modes (quant_modes.py).
NOT_TRANSLATED = {
    "QuantizeLinear": "quantized graphs: run by the quantization modes (ptq_fx, ...) only",
    "DequantizeLinear": "quantized graphs: run by the quantization modes (ptq_fx, ...) only",
    "QLinearConv": "quantized graphs: run by the quantization modes (ptq_fx, ...) only",
    "QLinearAdd": "quantized graphs: run by the quantization modes (ptq_fx, ...) only",
}
# The quantization modes: the quantized ops and the float ops a quantized model is made of
# (between DequantizeLinear and QuantizeLinear) that PyTorch's flows quantize.
QUANT_OPS = ["QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearAdd", "Conv",
             "BatchNorm", "Relu", "Relu6", "Clip", "HardSwish", "Add", "MaxPool", "AvgPool",
             "GlobalAvgPool", "Concat", "Identity", "Flatten", "Reshape", "Gemm"]
# Hello "constraints" of the quantization modes (docs/target-protocol.md): what quant_graph.py
# and quant_modes.py refuse in every graph, so that fusefuzz never builds it: PyTorch's
# activations are per tensor with a positive scale, and the onednn and qnnpack engines'
# quantized ops take uint8 activations (check_flow_params); a value is quantized once (its
# observer), and ops on the integers (MaxPool) keep their input's parameters (quant_graph.py:
# "quantized twice", quant_modes.py: "shares one observer": MaxPool, Relu, Clip run on the
# integers); weights are symmetric int8; a quantized intermediate that is also an output would
# be two outputs of one float value. (The pads PyTorch refuses, "prepare_fx observes pad", are
# the explicit pads of asymmetric pools and convs, not the conv blocks' Pads: integer_pads false
# changed nothing, measured.)
QUANT_CONSTRAINTS = {"activation_types": ["uint8"], "per_axis_activations": False,
                     "negative_scales": False, "requantize": False, "weight_zero_points": False,
                     "quantized_graph_outputs": False}
# Hello "fusions" (engine coverage, docs/campaign.md "Engine fusions"): each mode's fusions,
# named as its rewrites report them (diff_rewrites here, quant_fx.py, quant_eager.py).
FUSIONS = {
    "fx": ["fx:Conv2d-BatchNorm2d"],
    "fuse_fx": ["fuse_fx:Conv2d-BatchNorm2d", "fuse_fx:Conv2d-BatchNorm2d-ReLU=ConvReLU2d",
                "fuse_fx:Conv2d-ReLU=ConvReLU2d", "fuse_fx:BatchNorm2d-ReLU=BNReLU2d",
                "fuse_fx:Linear-ReLU=LinearReLU"],
    "fuse_modules": ["fuse_modules:Conv2d-BatchNorm2d-ReLU", "fuse_modules:Conv2d-BatchNorm2d",
                     "fuse_modules:Conv2d-ReLU", "fuse_modules:BatchNorm2d-ReLU"],
}
# Eager quantization fuses the declaration-order groups (fuse_modules' four patterns); the FX
# flows report chain=fused type: eval-mode PTQ folds BN into the Conv2d, QAT keeps ConvBn*.
for _m in ("ptq_eager", "ptq_eager_dataflow"):
    FUSIONS[_m] = ["ptq_eager:Conv2d-BatchNorm2d-ReLU", "ptq_eager:Conv2d-BatchNorm2d",
                   "ptq_eager:Conv2d-ReLU", "ptq_eager:BatchNorm2d-ReLU"]
for _m in ("ptq_fx", "ptq_fx_qnnpack"):
    FUSIONS[_m] = [_m + ":Conv2d-BatchNorm2d=Conv2d", _m + ":Conv2d-BatchNorm2d-ReLU=ConvReLU2d",
                   _m + ":Conv2d-ReLU=ConvReLU2d", _m + ":BatchNorm2d-ReLU=BNReLU2d",
                   _m + ":Linear-ReLU=LinearReLU"]
FUSIONS["qat_fx"] = ["qat_fx:Conv2d-BatchNorm2d=ConvBn2d",
                     "qat_fx:Conv2d-BatchNorm2d-ReLU=ConvBnReLU2d", "qat_fx:Conv2d-ReLU=ConvReLU2d",
                     "qat_fx:BatchNorm2d-ReLU=BNReLU2d", "qat_fx:Linear-ReLU=LinearReLU"]
# The spellings (ir/spellings.def, family torch) the float modes write (spellings.py; named here
# too because the hello goes out before torch is imported; test_spellings.py checks they agree).
SPELLINGS = sorted([
    "torch.F.relu", "torch.relu_", "torch.ReLU-inplace", "torch.Tensor.relu_", "torch.clamp-min",
    "torch.F.relu6", "torch.Hardtanh", "torch.functional", "torch.conv-padding-same",
    "torch.conv-padding-valid", "torch.F.conv2d", "torch.conv-bias-add", "torch.Conv1d",
    "torch.BatchNorm-affine-false", "torch.F.batch_norm", "torch.Identity", "torch.Dropout-eval",
    "torch.F.linear", "torch.addmm", "torch.matmul-add", "torch.Linear-bias-add",
    "torch.shared-module", "torch.forward-hook", "torch.forward-pre-hook", "torch.python-scalar",
    "torch.inplace-binary", "torch.view", "torch.flatten", "torch.F.max_pool2d",
    "torch.mean-keepdim"])
FLOAT_MODES = ["eager", "fx", "fuse_fx", "fuse_modules", "torchscript", "mobile", "trace"]
QUANT_MODES = ["ptq_fx", "ptq_fx_qnnpack", "ptq_eager", "ptq_eager_dataflow", "qat_fx"]
MODES = FLOAT_MODES + QUANT_MODES


def engine_version():
    # From the package metadata: cheap, the hello goes out before torch is imported.
    try:
        return "torch " + importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "torch (version unknown)"


def spellings_of(mode):
    """The spellings a mode's hello declares: the float modes write them all."""
    return [] if mode in QUANT_MODES else list(SPELLINGS)


# Several cases per request (docs/target-protocol.md, "Batches"): fusefuzz joins them into one
# graph, so one translation and one trace or script serve them all. The float modes only: the
# quantization flows calibrate and convert a whole model, and are slow per node, not per call.
BATCH = {"cases": 16, "max_nodes": 600}


def capabilities(mode):
    # fuse_modules takes the module groups from us, so applying only the first N is exact;
    # the other passes are opaque, so they cannot be cut short (no bisect_limit).
    batch = ["batch"] if mode in FLOAT_MODES else []
    if mode in ("fuse_modules", "ptq_eager"):
        return ["bisect_limit", "rewrites", "bench"] + batch
    if mode in QUANT_MODES:
        return ["rewrites", "bench"]
    if mode in ("fx", "fuse_fx"):
        return ["rewrites", "bench"] + batch  # rewrites read off the module tree before and after
    return ["bench"] + batch


def bench_counts(req):
    """(warmup, runs) of a timing request, or None for an ordinary request."""
    b = req.get("bench")
    if b is None:
        return None
    ok = isinstance(b, dict) and all(
        isinstance(b.get(k), int) and not isinstance(b.get(k), bool) for k in ("warmup", "runs"))
    if not ok or b["warmup"] < 0 or b["runs"] < 1:
        raise ValueError('"bench" needs integers warmup >= 0 and runs >= 1, got %r' % (b,))
    return b["warmup"], b["runs"]


def time_runs(module, inputs, warmup, runs):
    """(outputs of the last run, timings): each timed run is the module call alone."""
    outputs = None
    for _ in range(warmup):
        outputs = module(*inputs)
    ns = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        outputs = module(*inputs)
        ns.append(time.perf_counter_ns() - t0)
    ns.sort()
    mid = len(ns) // 2
    median = ns[mid] if len(ns) % 2 else (ns[mid - 1] + ns[mid]) / 2
    return outputs, {"runs": len(ns), "median_ns": median, "min_ns": ns[0]}


def declaration_order_groups(modules):
    """The module lists a user writes for torch.ao.quantization.fuse_modules from the order of
    declaration, as the quantization tutorial's ResNet does: consecutive Conv2d, BatchNorm2d,
    ReLU names, whatever the data flow between them (the 73% -> 1% ResNet bug)."""
    import torch.nn as nn
    patterns = [(nn.Conv2d, nn.BatchNorm2d, nn.ReLU), (nn.Conv2d, nn.BatchNorm2d),
                (nn.Conv2d, nn.ReLU), (nn.BatchNorm2d, nn.ReLU)]
    groups, i = [], 0
    while i < len(modules):
        for p in patterns:
            run = modules[i:i + len(p)]
            if len(run) == len(p) and all(type(m) is t for (_, _, m), t in zip(run, p)):
                groups.append(run)
                i += len(p)
                break
        else:
            i += 1
    return groups


def rewrite(index, rule, nodes):
    unique = []
    for n in nodes:  # a FusedConv's conv and activation modules share one graph node
        if n not in unique:
            unique.append(n)
    return {"index": index, "rule": rule, "nodes": unique}


def diff_rewrites(tr, after, mode):
    """Fusions seen in the module tree: a module kept under its name, and the BatchNorm/ReLU
    modules right after it in the data flow that are gone."""
    import torch.nn as nn
    foldable = (nn.BatchNorm1d, nn.BatchNorm2d, nn.ReLU)
    before_mods = dict(tr.module.named_modules())
    after_mods = dict(after.named_modules())
    kept = {n.target for n in after.graph.nodes if n.op == "call_module"}
    out = []
    for n in tr.module.graph.nodes:
        if n.op != "call_module" or n.target not in kept:
            continue
        chain, cur = [n], n
        while True:
            nxt = [u for u in cur.users if u.op == "call_module" and u.target not in kept
                   and isinstance(before_mods[u.target], foldable)]
            if len(nxt) != 1 or len(cur.users) != 1:
                break
            cur = nxt[0]
            chain.append(cur)
        # A module called twice (spelling torch.shared-module) may be gone from the fused tree
        # while the graph still calls it: then the run says what happened, not this diff.
        changed = type(after_mods.get(n.target)) is not type(before_mods[n.target])
        if len(chain) > 1 or changed:
            rule = "%s:%s" % (mode, "-".join(type(before_mods[c.target]).__name__ for c in chain))
            if changed:  # e.g. fuse_fx:Conv2d-BatchNorm2d-ReLU=ConvReLU2d
                rule += "=" + type(after_mods.get(n.target)).__name__
            out.append(rewrite(len(out) + 1, rule, [tr.node_of_module[c.target] for c in chain]))
    return out


def optimize(tr, mode, limit, state=None):
    """(module to run, rewrites or None) for one translated graph. The rewrites are also left
    in state["rewrites"] as soon as they are known, so that an error in the fusion or the run
    can still report them."""
    import torch
    state = {} if state is None else state
    if mode == "eager":
        return tr.module, []
    if mode == "fx":
        from torch.fx.experimental.optimization import fuse
        fused = fuse(tr.module)
        return fused, diff_rewrites(tr, fused, mode)
    if mode == "fuse_fx":
        from torch.ao.quantization.quantize_fx import fuse_fx
        fused = fuse_fx(tr.module)
        return fused, diff_rewrites(tr, fused, mode)
    if mode == "fuse_modules":
        from torch.ao.quantization import fuse_modules
        groups = declaration_order_groups(tr.modules)
        if limit >= 0:
            groups = groups[:limit]
        rewrites = [rewrite(i + 1, "fuse_modules:" + "-".join(type(m).__name__ for _, _, m in g),
                            [node for _, node, _ in g]) for i, g in enumerate(groups)]
        state["rewrites"] = rewrites
        if not groups:
            return tr.module, rewrites
        return fuse_modules(tr.module, [[name for name, _, _ in g] for g in groups]), rewrites
    if mode == "torchscript":
        frozen = torch.jit.freeze(torch.jit.script(tr.module))
        return torch.jit.optimize_for_inference(frozen), None
    if mode == "mobile":
        # optimize_for_mobile freezes the scripted module itself, then its mobile passes
        # (conv-bn fold, XNNPACK prepacking, dropout removal, ...).
        from torch.utils.mobile_optimizer import optimize_for_mobile
        return optimize_for_mobile(torch.jit.script(tr.module)), None
    if mode == "trace":
        traced = torch.jit.trace(tr.module, tuple(state["example_inputs"]), check_trace=False)
        return torch.jit.freeze(traced), None
    raise ValueError("unknown mode " + mode)


def handle(req, mode, state=None):
    import torch
    state = {} if state is None else state
    import translate
    if mode in QUANT_MODES:
        return handle_quant(req, mode, state)
    tr = translate.translate(req["graph"])
    options = req.get("options") or {}
    inputs = [translate.tensor_from_json(req["inputs"][name]) for name in tr.input_names]
    run_mode = mode if options.get("optimize", True) else "eager"
    limit = options.get("bisect_limit", -1)
    counts = bench_counts(req)
    state["example_inputs"] = inputs  # the trace mode traces the module on them
    module, rewrites = optimize(tr, run_mode, -1 if limit is None else int(limit), state)
    if rewrites is not None:
        state["rewrites"] = rewrites
    timings = None
    with torch.no_grad():
        if counts:
            outputs, timings = time_runs(module, inputs, *counts)
        else:
            outputs = module(*inputs)
    resp = {"outputs": {name: translate.tensor_to_json(t)
                        for name, t in zip(tr.output_names, outputs)}}
    if timings:
        resp["timings"] = timings
    if rewrites is not None and "rewrites" in capabilities(mode):
        resp["rewrites"] = rewrites
    return resp


def handle_quant(req, mode, state):
    """A quantization mode's request: the flow, or (optimize false) the graph's quantization
    simulated by PyTorch in float (quant_modes.py). The response carries, beside the outputs,
    how each graph node ran: "node_forms" (quantized kernel, reference module, float)."""
    import quant_modes
    options = req.get("options") or {}
    limit = options.get("bisect_limit", -1)
    counts = bench_counts(req)
    outputs, rewrites, forms, timings = quant_modes.handle(
        req, mode, options.get("optimize", True), -1 if limit is None else int(limit), state,
        counts, time_runs)
    resp = {"outputs": outputs, "node_forms": forms}
    if state.get("backend_quantizes") is not None:
        resp["backend_quantizes"] = state["backend_quantizes"]
    if timings:
        resp["timings"] = timings
    if rewrites is not None:
        resp["rewrites"] = rewrites
    return resp


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, default="eager")
    parser.add_argument("--name", default=None, help="name in the hello (default pytorch-MODE)")
    args = parser.parse_args()
    # Protocol lines only on the real stdout; anything a library prints goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr

    def send(obj):
        out.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
        out.flush()

    hello = {"protocol": "fusefuzz-target", "version": 1,
             "name": args.name or "pytorch-" + args.mode, "engine": engine_version(),
             "ops": QUANT_OPS if args.mode in QUANT_MODES else OPS,
             "capabilities": capabilities(args.mode)}
    if "batch" in capabilities(args.mode):
        hello["batch"] = BATCH
    if spellings_of(args.mode):
        hello["spellings"] = spellings_of(args.mode)
    if args.mode in QUANT_MODES:
        hello["constraints"] = QUANT_CONSTRAINTS
    if FUSIONS.get(args.mode):
        hello["fusions"] = FUSIONS[args.mode]
    if args.mode in QUANT_MODES:
        # quantize_per_tensor (ATen's quantize_val and its vectorized form) multiplies by the
        # float32 reciprocal of the scale and rounds half to even, where ONNX divides.
        hello["quantize_rounding"] = "reciprocal_multiply"
    send(hello)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import translate
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            rid = req["id"]
        except (ValueError, KeyError, TypeError) as e:
            send({"id": None, "error": "bad request: %r" % (e,)})
            continue
        state = {}
        try:
            send(dict(id=rid, **handle(req, args.mode, state)))
        except translate.Unsupported as e:
            send({"id": rid, "unsupported": str(e)})
        except Exception as e:  # the engine failed on this graph: a finding of kind error
            resp = {"id": rid, "error": "%s: %s" % (type(e).__name__, str(e)[:2000])}
            # The rewrites applied before the failure: fusefuzz blames an optimized-run-only
            # error by them (fuse_modules grouping modules across channel counts).
            if state.get("rewrites") and "rewrites" in capabilities(args.mode):
                resp["rewrites"] = state["rewrites"]
            send(resp)


if __name__ == "__main__":
    main()
