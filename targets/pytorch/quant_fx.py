"""The FX graph-mode flows: ptq_fx (onednn), ptq_fx_qnnpack, qat_fx (README.md).

What a user's script does: prepare_fx (or prepare_qat_fx) with a QConfigMapping and the
engine's backend config (fusion of Conv/BN/ReLU, Add/ReLU is inside prepare), calibration
(or a few train steps), convert_fx. The one difference: the observers are the graph's
(quant_observers.py), assigned after prepare to the tensors they observe.
"""

import torch
import torch.nn as nn

import quant_modes
import quant_observers
from translate import Unsupported

QAT_STEPS = 3
# Graph ops that translate.py writes as functions, and the functions convert_fx calls for them.
FUNCTION_OPS = {("Add",): ("add", "add_relu", "iadd"), ("Clip",): ("clamp",),
                ("Reshape", "Flatten"): ("reshape",), ("Concat",): ("cat",)}


def backend_config(mode):
    from torch.ao.quantization.backend_config import (get_native_backend_config,
                                                      get_qnnpack_backend_config)
    return get_qnnpack_backend_config() if mode == "ptq_fx_qnnpack" else \
        get_native_backend_config()


def promised_modules(config):
    """The module types `config` (a BackendConfig) declares a quantized form of on their own:
    a single-module pattern with a quint8 output."""
    configs = config.configs.values() if isinstance(config.configs, dict) else config.configs
    out = set()
    for c in configs:
        p = c.pattern
        if isinstance(p, type) and issubclass(p, nn.Module) and \
                any(d.output_dtype == torch.quint8 for d in c.dtype_configs):
            out.add(p)
    return out


def backend_quantizes(tr, split, config):
    """The graph nodes whose float module the backend config promises to quantize: the nodes
    fusefuzz expects in "quantized" form (docs/campaign.md, kind unquantized)."""
    promised = promised_modules(config)
    return sorted({split.origin[node] for _, node, module in tr.modules
                   if type(module) in promised})


def qconfig_mapping(tr, split, qat):
    from torch.ao.quantization import QConfigMapping
    mapping = QConfigMapping().set_global(quant_observers.qconfig(None, qat))
    for name, node, module in tr.modules:
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            grid = split.weights.get(node)
            # A weight the graph does not declare on a grid has no parameters to honour.
            mapping.set_module_name(name, quant_observers.qconfig(grid, qat) if grid else None)
    return mapping


def absorbed_chain_end(orig, node, kept):
    """The last node of the pattern fused into `node`: the modules after it in the float
    model's data flow that prepare removed (BatchNorm, ReLU folded into a ConvBnReLU2d)."""
    cur = node
    while True:
        nxt = [u for u in cur.users if u.op == "call_module" and u.target not in kept]
        if len(nxt) != 1 or len(cur.users) != 1:
            return cur
        cur = nxt[0]


def is_zero_pad(node):
    import torch.nn.functional as F
    return (node.op == "call_function" and node.target is F.pad and
            node.kwargs.get("mode", "constant") == "constant" and
            not node.kwargs.get("value", 0.0) and len(node.args) == 2)


def observed_values(tr, prepared):
    """[(observer, float value)] for every activation observer (or fake quantize) of the
    prepared model."""
    value_of = quant_modes.value_of_fx_nodes(tr)
    orig = {n.name: n for n in tr.module.graph.nodes}
    kept = {n.target for n in prepared.graph.nodes if n.op == "call_module"}
    out = []
    for n in prepared.graph.nodes:
        if n.op != "call_module" or not n.target.startswith("activation_post_process"):
            continue
        obs = getattr(prepared, n.target)
        obs = getattr(obs, "activation_post_process", obs)  # FakeQuantize holds the observer
        src = n.args[0]
        o = orig.get(src.name)
        if o is None:
            raise Unsupported("prepare_fx observes %s, not a node of the float model" % src.name)
        if src.op == "call_module":
            o = absorbed_chain_end(tr.module.graph, o, kept)
        while o.name not in value_of and is_zero_pad(o):
            # translate.py pads asymmetric conv pads with F.pad (zeros) before the conv: the
            # conv's input observer sees the padded tensor, on its input's grid (Q(0) = z).
            o = o.args[0]
        if o.name not in value_of:
            raise Unsupported("prepare_fx observes %s, which is no graph value" % o.name)
        out.append((obs, value_of[o.name]))
    return out


class FormRecorder(torch.fx.Interpreter):
    """Runs the converted module and records, per fx node, whether its output is quantized."""

    def __init__(self, module):
        super().__init__(module)
        self.quantized = {}

    def run_node(self, n):
        out = super().run_node(n)
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        self.quantized[n.name] = isinstance(first, torch.Tensor) and first.is_quantized
        return out


def node_forms(tr, split, converted, inputs):
    """Graph node -> "quantized" (int8 kernels, or an op run on the int8 tensor), "reference"
    (a reference module: dequantize, float op, quantize) or "float", from a run of the
    converted module; graph nodes fused into a module take its form."""
    try:
        import torch.ao.nn.quantized.reference as nnqr
        reference = tuple(v for v in vars(nnqr).values() if isinstance(v, type))
    except ImportError:
        reference = ()
    rec = FormRecorder(converted)
    with torch.no_grad():
        rec.run(*inputs)
    mods = dict(converted.named_modules())
    kept = {n.target for n in converted.graph.nodes if n.op == "call_module"}
    origin_of = {name: split.origin[node] for name, node, _ in tr.modules}
    forms = {}
    for n in converted.graph.nodes:
        if n.op == "call_module" and n.target in origin_of:
            m = mods[n.target]
            forms[origin_of[n.target]] = "reference" if isinstance(m, reference) else \
                "quantized" if rec.quantized.get(n.name) else "float"
    for n in tr.module.graph.nodes:  # modules absorbed by a fusion take its form
        if n.op == "call_module" and n.target in kept and n.target in origin_of:
            end, cur = absorbed_chain_end(tr.module.graph, n, kept), n
            while cur is not end:
                cur = next(iter(cur.users))
                forms.setdefault(origin_of.get(cur.target), forms.get(origin_of[n.target]))
    # Function ops, matched in order: the i-th graph node of the op is the i-th call of its
    # functions in the converted graph (convert keeps the order).
    for ops, names in FUNCTION_OPS.items():
        calls = [n for n in converted.graph.nodes if n.op == "call_function" and
                 getattr(n.target, "__name__", str(n.target)) in names]
        graph_nodes = [split.origin[nd["name"]] for nd in split.nodes if nd["op"] in ops]
        for origin, n in zip(graph_nodes, calls):
            forms.setdefault(origin, "quantized" if rec.quantized.get(n.name) else "float")
    graph_adds = [split.origin[nd["name"]] for nd in split.nodes if nd["op"] == "Add"]
    # A ReLU lowered into its add (quantized::add_relu) takes the add's form.
    tr_adds = [n for n in tr.module.graph.nodes if n.op == "call_function" and
               getattr(n.target, "__name__", "") == "add"]
    add_origin = dict(zip(tr_adds, graph_adds))
    for n in tr.module.graph.nodes:
        if n.op == "call_module" and n.target not in kept and n.args and n.args[0] in add_origin:
            forms.setdefault(origin_of.get(n.target), forms.get(add_origin[n.args[0]]))
    forms.pop(None, None)
    return forms


def run(tr, split, inputs, mode, state):
    """(converted module, rewrites, node forms)."""
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx, prepare_qat_fx
    qat = mode == "qat_fx"
    model = tr.module
    mapping = qconfig_mapping(tr, split, qat)
    config = backend_config(mode)
    state["backend_quantizes"] = backend_quantizes(tr, split, config)
    example = tuple(inputs)
    if qat:
        model.train()
        prepared = prepare_qat_fx(model, mapping, example, backend_config=config)
    else:
        prepared = prepare_fx(model, mapping, example, backend_config=config)
    assign = observed_values(tr, prepared)
    quant_modes.assign_observers(split, assign, "prepare_fx")
    rewrites = fused_rewrites(tr, split, prepared, mode)
    state["rewrites"] = rewrites
    if qat:
        # The train steps run the QAT machinery (fake quantization, the ConvBn modules'
        # training form, autograd) but move neither weights nor BN statistics off the graph's:
        # statistics frozen, learning rate 0 (README.md).
        import torch.nn.intrinsic.qat as nniqat
        prepared.apply(nniqat.freeze_bn_stats)
        # freeze_bn_stats reaches only the ConvBn modules; a BatchNorm left on its own (no conv
        # before it, or the second of two) would otherwise normalize by the batch and move its
        # running statistics in the train steps (an adapter bug found by the qat_fx campaign).
        for m in prepared.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.eval()
        params = [p for p in prepared.parameters()]
        for p in params:
            p.requires_grad_(True)
        opt = torch.optim.SGD(params, lr=0.0) if params else None
        for _ in range(QAT_STEPS):
            outs = prepared(*example)
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            loss = sum(o.float().mean() for o in outs)
            if opt and loss.requires_grad:
                opt.zero_grad()
                loss.backward()
                opt.step()
        prepared.eval()
    else:
        with torch.no_grad():
            prepared(*example)  # calibration
    converted = convert_fx(prepared, backend_config=config)
    return converted, rewrites, node_forms(tr, split, converted, example)


def fused_rewrites(tr, split, prepared, mode):
    """The fusions prepare applied, as rewrites: a module whose type changed (ConvReLU2d,
    ConvBn2d, ...) and the modules it absorbed."""
    before = dict(tr.module.named_modules())
    after = dict(prepared.named_modules())
    kept = {n.target for n in prepared.graph.nodes if n.op == "call_module"}
    node_of = {name: node for name, node, _ in tr.modules}
    out = []
    for n in tr.module.graph.nodes:
        if n.op != "call_module" or n.target not in kept or n.target not in after:
            continue
        end = absorbed_chain_end(tr.module.graph, n, kept)
        chain, cur = [n], n
        while cur is not end:
            cur = next(iter(cur.users))
            chain.append(cur)
        fused = type(after[n.target]).__name__
        # QAT swaps every conv for its QAT form: only modules that absorbed others are fusions.
        if len(chain) > 1:
            rule = "%s:%s=%s" % (mode, "-".join(type(before[c.target]).__name__ for c in chain),
                                 fused)
            nodes = []
            for c in chain:
                origin = split.origin.get(node_of.get(c.target))
                if origin is not None and origin not in nodes:
                    nodes.append(origin)
            out.append({"index": len(out) + 1, "rule": rule, "nodes": nodes})
    return out
