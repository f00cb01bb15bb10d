"""The quantization modes of the PyTorch target: one request of a quantized graph.

    ptq_fx          prepare_fx -> calibration -> convert_fx, onednn engine
    ptq_fx_qnnpack  the same on the qnnpack engine (its backend config)
    ptq_eager       fuse_modules (lists by declaration order) -> prepare -> calibrate -> convert
    ptq_eager_dataflow  the same with correct lists (Conv/BN/ReLU chains of the data flow)
    qat_fx          prepare_qat_fx -> a few train steps -> convert_fx, onednn engine

The optimized run is the flow (quant_fx.py, quant_eager.py). The unoptimized run (fusefuzz's
kernel check) is the same float model with the graph's quantization simulated by PyTorch's own
quantize_per_tensor / dequantize at the graph's quantization points and nothing fused: the
graph as written, computed by PyTorch, so that a difference of the optimized run is the
flow's (its fusion and its int8 kernels). See README.md, "Quantization flows".
"""

import torch

import quant_graph
import translate
from translate import Unsupported

QUANT_MODES = ["ptq_fx", "ptq_fx_qnnpack", "ptq_eager", "ptq_eager_dataflow", "qat_fx"]
ENGINE = {"ptq_fx": "onednn", "ptq_fx_qnnpack": "qnnpack", "ptq_eager": "onednn",
          "ptq_eager_dataflow": "onednn", "qat_fx": "onednn"}
TORCH_DTYPE = {"uint8": torch.quint8, "int8": torch.qint8}


def fake_quant(x, scale, zero_point, dtype):
    """PyTorch's quantization of a float tensor and back: the graph's Q -> DQ."""
    return torch.quantize_per_tensor(x, scale, zero_point, dtype).dequantize()


def value_of_fx_nodes(tr):
    """fx node name of the float model -> the float graph value it computes (the first one:
    Identity makes several values one node)."""
    out = {}
    for value, node in tr.env.items():
        out.setdefault(node.name, value)
    return out


def simulate(tr, split):
    """The float model with PyTorch's quantize -> dequantize after every quantization point."""
    g = tr.module.graph
    done = set()
    for value, p in split.points.items():
        node = tr.env[value]
        if node in done:  # Identity on integers: one fx node, one grid
            continue
        done.add(node)
        with g.inserting_after(node):
            fq = g.call_function(fake_quant, (node, p.scale, p.zero_point, TORCH_DTYPE[p.type]))
        node.replace_all_uses_with(fq, delete_user_cb=lambda user, fq=fq: user is not fq)
    g.lint()
    tr.module.recompile()
    return tr.module


def model_inputs(req, tr, split):
    """The request's tensors as the float model's inputs: integer inputs dequantized."""
    xs = []
    for name in tr.input_names:
        t = translate.tensor_from_json(req["inputs"][name])
        if name in split.int_inputs:
            t = torch.from_numpy(split.int_inputs[name].dequantize(t.numpy()))
        xs.append(t)
    return xs


def answer_outputs(split, outputs):
    """The model's outputs as the graph's: integer outputs on the graph's grid."""
    resp = {}
    for name, t in zip(split.graph["outputs"], outputs):
        if t.is_quantized:
            t = t.dequantize()
        if name in split.dq_outputs:
            # DQ(Q(v)) of a value the flow may answer unquantized (a model input): the graph's
            # quantization of it, as for integer outputs below.
            p = split.dq_outputs[name]
            t = fake_quant(t.detach().float().contiguous(), p.scale, p.zero_point,
                           TORCH_DTYPE[p.type])
        if name in split.int_outputs:
            # The graph's QuantizeLinear of what the model answers: exact for a tensor the flow
            # quantized on this grid (FX dequantizes its outputs); a graph output that is the
            # quantization of a model input is never quantized by the flow (FX returns the
            # float placeholder), and is what a user's script quantizes itself.
            p = split.int_outputs[name][1]
            t = torch.quantize_per_tensor(t.detach().float().contiguous(), p.scale,
                                          p.zero_point, TORCH_DTYPE[p.type]).int_repr().float()
        resp[name] = translate.tensor_to_json(t)
    return resp


def check_flow_params(split, mode):
    for value, p in split.points.items():
        if p.type != "uint8":
            raise Unsupported("%s: value %s quantized as %r: the %s engine's quantized ops "
                              "take uint8 activations" % (mode, value, p, ENGINE[mode]))


def assign_observers(split, observed, flow, allow_missing=False):
    """Gives each observer the parameters of the graph's quantization point it observes.

    `observed` is [(observer module, float value)]. A value that the graph does not quantize
    itself takes the parameters of the point that follows it through order-preserving ops that
    Q commutes with (a ReLU after a quantized add: relu(Q(v)) = Q(relu(v)) since Q(0) = z).
    Raises Unsupported when the flow quantizes a tensor the graph keeps in float, or keeps in
    float a tensor the graph quantizes (a fused pattern has no quantization point inside);
    `allow_missing`: a wrong fusion (ptq_eager) moved the points, run it anyway."""
    covered = set()
    given = {}  # id(observer) -> (params, value): ops on the int8 tensor share one instance
    for obs, value in observed:
        v = value
        while v is not None and v not in split.points:
            v = split.commuting_successor(v)
        if v is None:
            raise Unsupported("%s quantizes %s, which the graph keeps in float" % (flow, value))
        before = given.setdefault(id(obs), (split.points[v], v))
        if before[0] != split.points[v]:
            raise Unsupported("%s shares one observer between %s (%r) and %s (%r): it runs the "
                              "op between them on the int8 tensor, the graph requantizes" %
                              (flow, before[1], before[0], v, split.points[v]))
        obs.assign(split.points[v], v)
        covered.add(v)
        if v != value:
            covered.add(value)
    for v in split.points:  # in graph order: a point computed on a covered point's grid
        src = split.same_grid_source(v)
        if v not in covered and src is not None and src in covered:
            covered.add(v)
    missing = [v for v in split.points if v not in covered and v not in split.shared]
    if missing and not allow_missing:
        raise Unsupported("the graph quantizes %s, which %s keeps in float (no observer: inside "
                          "a fused pattern, or an op the backend does not quantize)" %
                          (", ".join(sorted(missing)), flow))


def handle(req, mode, optimize, bisect_limit, state, counts=None, time_runs=None):
    """(outputs JSON, rewrites, node forms, timings or None) for a request of a quantization
    mode; `counts` (warmup, runs) asks for the module's calls to be timed by `time_runs`."""
    split = quant_graph.split(req["graph"])
    fg = split.float_graph()
    tr = translate.translate(fg)
    inputs = model_inputs(req, tr, split)
    torch.backends.quantized.engine = ENGINE[mode]
    rewrites, forms = [], {}
    if not optimize:
        module = simulate(tr, split)
        forms = {origin: "simulated" for origin in split.origin.values()}
    else:
        check_flow_params(split, mode)
        if mode in ("ptq_eager", "ptq_eager_dataflow"):
            import quant_eager
            # ptq_eager_dataflow: the correct lists (each group cut to its data-flow chain).
            limit = 0 if mode == "ptq_eager_dataflow" else bisect_limit
            module, rewrites, forms = quant_eager.run(tr, split, inputs, limit, state)
        else:
            import quant_fx
            module, rewrites, forms = quant_fx.run(tr, split, inputs, mode, state)
    timings = None
    with torch.no_grad():
        if counts:
            outputs, timings = time_runs(module, inputs, *counts)
        else:
            outputs = module(*inputs)
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    return answer_outputs(split, outputs), rewrites, forms, timings

