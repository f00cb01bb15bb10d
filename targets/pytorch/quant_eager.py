"""The eager-mode flow ptq_eager (README.md): fuse_modules -> prepare -> calibrate -> convert.

The model a user writes for eager quantization: the float modules in graph order, a QuantStub
where the graph quantizes a graph input, FloatFunctional for each Add, a DeQuantStub before each
graph output. The fusion lists are built as the founding report's user built them: by
declaration order (fusefuzz_torch.declaration_order_groups over the modules), whatever the data
flow between them. Groups that are a real data-flow chain get the graph's parameters; the
observers of a group that fuses across the data flow have none to honour and calibrate as a
min/max observer would (the user's), so the wrong fusion runs and its numbers show.
"""

import operator

import torch
import torch.nn as nn
from torch.ao.quantization import DeQuantStub, QuantStub, fuse_modules
from torch.ao.quantization.quantize import convert, prepare

import quant_modes
import quant_observers
from translate import Unsupported

# Functions of the float model that run on quantized tensors in eager mode.
QUANTIZED_FUNCTIONS = {torch.reshape, torch.clamp}
MODULES = (nn.Conv2d, nn.Linear, nn.BatchNorm2d, nn.ReLU, nn.ReLU6, nn.Hardswish, nn.MaxPool2d,
           nn.AvgPool2d, nn.AdaptiveAvgPool2d)


def build(tr, split):
    """Rewrites the float GraphModule into the eager user's model (stubs, FloatFunctional)."""
    from torch.ao.nn.quantized import FloatFunctional
    m, g = tr.module, tr.module.graph
    value_of = quant_modes.value_of_fx_nodes(tr)
    observed = []  # (module name, float value) of the stubs and functionals
    for n in list(g.nodes):
        if n.op == "call_function" and n.target is operator.add:
            name = "ff_" + n.name
            m.add_module(name, FloatFunctional())
            with g.inserting_before(n):
                ff = g.get_attr(name)
                add = g.call_method("add", (ff, n.args[0], n.args[1]))
            n.replace_all_uses_with(add)
            g.erase_node(n)
            observed.append((name, value_of[n.name]))
        elif n.op == "call_function" and n.target not in QUANTIZED_FUNCTIONS:
            raise Unsupported("ptq_eager: %s runs in float in the model (eager quantization has "
                              "no quantized form of it)" % getattr(n.target, "__name__", n.target))
        elif n.op == "call_module" and not isinstance(getattr(m, n.target), MODULES):
            raise Unsupported("ptq_eager: module %s (%s) has no eager quantized form" %
                              (n.target, type(getattr(m, n.target)).__name__))
    for n in list(g.nodes):
        if n.op == "placeholder":
            name = "quant_" + n.name
            m.add_module(name, QuantStub())
            with g.inserting_after(n):
                q = g.call_module(name, (n,))
            n.replace_all_uses_with(q, delete_user_cb=lambda user, q=q: user is not q)
            observed.append((name, value_of[n.name]))
    out = [n for n in g.nodes if n.op == "output"][0]
    outs = []
    for k, o in enumerate(out.args[0]):
        name = "dequant_%d" % k
        m.add_module(name, DeQuantStub())
        with g.inserting_before(out):
            outs.append(g.call_module(name, (o,)))
    out.args = (tuple(outs),)
    g.lint()
    m.recompile()
    return observed


def run(tr, split, inputs, limit, state):
    """(converted module, rewrites, node forms)."""
    import fusefuzz_torch
    groups = fusefuzz_torch.declaration_order_groups(tr.modules)
    if limit >= 0:
        # The groups past the limit are fused as the data flow allows (their longest chain
        # prefix), not left unfused: every conv's output quantization point is the graph's only
        # once its BN (and ReLU) are fused into it, so an unfused conv has no parameters to
        # honour. Limit 0 is the correct lists (mode ptq_eager_dataflow).
        groups = groups[:limit] + [c for c in (chain_prefix(tr, g) for g in groups[limit:])
                                   if len(c) > 1]
    rewrites = [{"index": i + 1,
                 "rule": "ptq_eager:" + "-".join(type(mod).__name__ for _, _, mod in grp),
                 "nodes": unique(split.origin[node] for _, node, _ in grp)}
                for i, grp in enumerate(groups)]
    state["rewrites"] = rewrites
    value_of = quant_modes.value_of_fx_nodes(tr)
    value_of_module = {n.target: value_of[n.name] for n in tr.module.graph.nodes
                       if n.op == "call_module"}
    stubs = build(tr, split)
    model = tr.module
    chained = {grp[0][0]: is_chain(tr, grp) for grp in groups}
    ends = {grp[0][0]: value_of_module[grp[-1][0]] for grp in groups}
    if groups:
        model = fuse_modules(model, [[name for name, _, _ in grp] for grp in groups])
    model.qconfig = quant_observers.qconfig(None)
    for name, node, _ in tr.modules:
        mod = model.get_submodule(name)
        if isinstance(mod, nn.Identity):
            continue
        conv = mod[0] if isinstance(mod, nn.Sequential) else mod  # ConvReLU2d is a Sequential
        if isinstance(conv, (nn.Conv2d, nn.Linear)):
            grid = split.weights.get(node)
            mod.qconfig = quant_observers.qconfig(grid) if grid else None
    prepare(model, inplace=True)
    observed, fallback = [], []
    for name, node, _ in tr.modules:
        mod = model.get_submodule(name)
        obs = getattr(mod, "activation_post_process", None)
        # nnq.ReLU6 ignores its observer (it runs on the input's grid): not a quantization.
        if obs is None or isinstance(mod, (nn.Identity, nn.ReLU6)):
            continue
        value = ends.get(name, value_of_module[name])
        if name in chained and not chained[name]:
            fallback.append(obs)
        else:
            observed.append((obs, value))
    for name, value in stubs:
        obs = getattr(model.get_submodule(name), "activation_post_process", None)
        if obs is not None:
            observed.append((obs, value))
    quant_modes.assign_observers(split, observed, "ptq_eager", allow_missing=bool(fallback))
    for obs in fallback:
        obs.calibrate()
    with torch.no_grad():
        model(*inputs)  # calibration
    convert(model, inplace=True)
    return model, rewrites, node_forms(tr, split, model, stubs)


def unique(xs):
    out = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out


def chain_prefix(tr, grp):
    """The longest prefix of the group in which each module is the only consumer of the one
    before it: the fusion a user writing lists from the data flow would give."""
    for k in range(len(grp), 1, -1):
        if is_chain(tr, grp[:k]):
            return grp[:k]
    return grp[:1]


def is_chain(tr, grp):
    """True when each module of the group is the only consumer of the one before it."""
    nodes = {n.target: n for n in tr.module.graph.nodes if n.op == "call_module"}
    for (a, _, _), (b, _, _) in zip(grp, grp[1:]):
        users = list(nodes[a].users)
        if len(users) != 1 or users[0] is not nodes[b]:
            return False
    return True


def node_forms(tr, split, model, stubs):
    forms = {}
    for name, node, _ in tr.modules:
        mod = model.get_submodule(name)
        origin = split.origin[node]
        if isinstance(mod, nn.Identity):
            forms.setdefault(origin, "quantized")  # fused into the group's first module
            continue
        quantized = type(mod).__module__.startswith(("torch.ao.nn.quantized",
                                                     "torch.nn.quantized",
                                                     "torch.ao.nn.intrinsic.quantized",
                                                     "torch.nn.intrinsic.quantized"))
        # ReLU, pools and shape ops run on the quantized tensors as they are.
        forms[origin] = "quantized" if quantized or isinstance(mod, MODULES[3:]) else "float"
    for name, value in stubs:
        mod = getattr(model, name)
        if name.startswith("ff_"):
            quantized = type(mod).__name__ == "QFunctional"
            forms[split.origin_of_value(value)] = "quantized" if quantized else "float"
    return forms
