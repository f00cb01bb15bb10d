"""Spellings: the ways real PyTorch code writes a node (issue 51; ir/spellings.def, family torch).

A graph node may carry a "spelling"; translate.py hands such a node to `emit` here, which writes
the node's exact math that way (F.relu instead of nn.ReLU(), padding='same', a bias as a separate
add, a module called twice, a module carrying hooks, ...). The engines' rewrites match on how a
model is written, and break on it. Which node can take which spelling is fusefuzz's to decide
(ir/spelling.cc: e.g. in-place ops only on a value nothing else reads); this module trusts it.
"""

import json
import operator
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import translate as T


def noop_forward_hook(module, inputs: Tuple[torch.Tensor], output: torch.Tensor) -> None:
    return None


def noop_forward_pre_hook(module, inputs: Tuple[torch.Tensor]) -> None:
    return None


def _parameter(tr, node, key, tensor):
    """A parameter of the root module (as a model holds its weights), read with get_attr."""
    name = tr.unique("p_" + node["name"] + "_" + key)
    tr.root.register_parameter(name, nn.Parameter(tensor.clone(), requires_grad=False))
    return tr.fx.get_attr(name)


def _per_channel(t, rank):
    return t.reshape([1, -1] + [1] * (rank - 2))


def _conv_out(node, s, w):
    m, _, kh, kw = w.shape
    sh, sw = T.attr(node, "strides", [1, 1])
    dh, dw = T.attr(node, "dilations", [1, 1])
    t, l, b, r = T.attr(node, "pads", [0, 0, 0, 0])
    return [s[0], m, T.conv_output_size(s[2], kh, sh, dh, t, b),
            T.conv_output_size(s[3], kw, sw, dw, l, r)]


def _conv_module(node, w, bias, padding):
    m, cg, kh, kw = w.shape
    group = T.attr(node, "group", 1)
    conv = nn.Conv2d(cg * group, m, (kh, kw), stride=tuple(T.attr(node, "strides", [1, 1])),
                     dilation=tuple(T.attr(node, "dilations", [1, 1])), padding=padding,
                     groups=group, bias=bias is not None)
    with torch.no_grad():
        conv.weight.copy_(w)
        if bias is not None:
            conv.bias.copy_(bias)
    return conv


def _padded_input(tr, node, x):
    """(x, module padding): torch pads both sides equally; other pads go in an F.pad first."""
    t, l, b, r = T.attr(node, "pads", [0, 0, 0, 0])
    if t == b and l == r:
        return x, (t, l)
    return tr.fn(F.pad, x, [l, r, t, b]), 0


def _gemm_b(node, params):
    """B' as [K, N]."""
    return params["B"].t().contiguous() if T.attr(node, "transB", 0) else params["B"]


# ---- writers: (tr, node, ins, shapes, params) -> (fx node, shape) ----------------------------

def relu_function(f):
    return lambda tr, node, ins, shapes, params: (tr.fn(f, ins[0]), shapes[0])


def relu_inplace_module(tr, node, ins, shapes, params):
    return tr.call_module(node, nn.ReLU(inplace=True), [ins[0]]), shapes[0]


def relu_inplace_method(tr, node, ins, shapes, params):
    return tr.fx.call_method("relu_", (ins[0],)), shapes[0]


def clamp_min(tr, node, ins, shapes, params):
    return tr.fn(torch.clamp, ins[0], min=0.0), shapes[0]


def hardtanh(tr, node, ins, shapes, params):
    return tr.call_module(node, nn.Hardtanh(0.0, 6.0), [ins[0]]), shapes[0]


def functional_activation(tr, node, ins, shapes, params):
    x, op = ins[0], node["op"]
    a = lambda name, d: float(node.get("attrs", {}).get(name, d))
    if op == "Sigmoid":
        y = tr.fn(torch.sigmoid, x)
    elif op == "Tanh":
        y = tr.fn(torch.tanh, x)
    elif op == "Silu":
        y = tr.fn(F.silu, x)
    elif op == "HardSwish":
        y = tr.fn(F.hardswish, x)
    elif op == "Gelu":
        y = tr.fn(F.gelu, x, approximate=node.get("attrs", {}).get("approximate", "none"))
    elif op == "LeakyRelu":
        y = tr.fn(F.leaky_relu, x, a("alpha", 0.01))
    elif op == "Elu":
        y = tr.fn(F.elu, x, a("alpha", 1.0))
    else:
        raise T.Unsupported("torch.functional for %s" % op)
    return y, shapes[0]


def conv_padding(kind):
    def write(tr, node, ins, shapes, params):
        conv = _conv_module(node, params["W"], params.get("B"), kind)
        return tr.call_module(node, conv, [ins[0]]), _conv_out(node, shapes[0], params["W"])
    return write


def f_conv2d(tr, node, ins, shapes, params):
    """F.conv2d with the weight and bias as parameters of the root module."""
    x, padding = _padded_input(tr, node, ins[0])
    w = _parameter(tr, node, "W", params["W"])
    b = _parameter(tr, node, "B", params["B"]) if "B" in params else None
    y = tr.fn(F.conv2d, x, w, b, tuple(T.attr(node, "strides", [1, 1])), padding,
              tuple(T.attr(node, "dilations", [1, 1])), T.attr(node, "group", 1))
    return y, _conv_out(node, shapes[0], params["W"])


def conv_bias_add(tr, node, ins, shapes, params):
    x, padding = _padded_input(tr, node, ins[0])
    y = tr.call_module(node, _conv_module(node, params["W"], None, padding), [x])
    bias = tr.constant(node, "B", params["B"].reshape(1, -1, 1, 1))
    return tr.fn(operator.add, y, bias), _conv_out(node, shapes[0], params["W"])


def conv1d(tr, node, ins, shapes, params):
    w = params["W"]
    m, cg, kh, _ = w.shape
    group = T.attr(node, "group", 1)
    conv = nn.Conv1d(cg * group, m, kh, stride=T.attr(node, "strides", [1, 1])[0],
                     padding=T.attr(node, "pads", [0, 0, 0, 0])[0],
                     dilation=T.attr(node, "dilations", [1, 1])[0], groups=group,
                     bias="B" in params)
    with torch.no_grad():
        conv.weight.copy_(w[:, :, :, 0])
        if "B" in params:
            conv.bias.copy_(params["B"])
    y = tr.call_module(node, conv, [tr.fn(torch.squeeze, ins[0], 3)])
    return tr.fn(torch.unsqueeze, y, 3), _conv_out(node, shapes[0], w)


def _bn_class(rank):
    return nn.BatchNorm2d if rank == 4 else nn.BatchNorm1d


def bn_affine_false(tr, node, ins, shapes, params):
    s = shapes[0]
    bn = _bn_class(len(s))(s[1], eps=T.fattr(node, "epsilon", 1e-5), affine=False)
    with torch.no_grad():
        bn.running_mean.copy_(params["mean"])
        bn.running_var.copy_(params["var"])
    bn.eval()
    y = tr.call_module(node, bn, [ins[0]])
    y = tr.fn(operator.mul, y, tr.constant(node, "scale", _per_channel(params["scale"], len(s))))
    return tr.fn(operator.add, y, tr.constant(node, "bias", _per_channel(params["bias"], len(s)))), s


def f_batch_norm(tr, node, ins, shapes, params):
    c = {k: tr.constant(node, k, params[k]) for k in ("mean", "var", "scale", "bias")}
    y = tr.fn(F.batch_norm, ins[0], c["mean"], c["var"], c["scale"], c["bias"], False, 0.0,
              T.fattr(node, "epsilon", 1e-5))
    return y, shapes[0]


def identity_module(make):
    return lambda tr, node, ins, shapes, params: (tr.call_module(node, make(), [ins[0]]),
                                                  shapes[0])


def _gemm_out(node, s, params):
    b = _gemm_b(node, params)
    return [s[0], int(b.shape[1])]


def f_linear(tr, node, ins, shapes, params):
    w = _parameter(tr, node, "W", _gemm_b(node, params).t().contiguous())
    b = _parameter(tr, node, "C", params["C"].reshape(-1)) if "C" in params else None
    return tr.fn(F.linear, ins[0], w, b), _gemm_out(node, shapes[0], params)


def addmm(tr, node, ins, shapes, params):
    y = tr.fn(torch.addmm, tr.constant(node, "C", params["C"]), ins[0],
              tr.constant(node, "B", _gemm_b(node, params).contiguous()),
              beta=T.fattr(node, "beta", 1.0), alpha=T.fattr(node, "alpha", 1.0))
    return y, _gemm_out(node, shapes[0], params)


def matmul_add(tr, node, ins, shapes, params):
    y = tr.fn(torch.matmul, ins[0], tr.constant(node, "B", _gemm_b(node, params).contiguous()))
    return tr.fn(operator.add, y, tr.constant(node, "C", params["C"])), \
        _gemm_out(node, shapes[0], params)


def linear_bias_add(tr, node, ins, shapes, params):
    b = _gemm_b(node, params)
    linear = nn.Linear(int(b.shape[0]), int(b.shape[1]), bias=False)
    with torch.no_grad():
        linear.weight.copy_(b.t())
    y = tr.call_module(node, linear, [ins[0]])
    return tr.fn(operator.add, y, tr.constant(node, "C", params["C"].reshape(-1))), \
        _gemm_out(node, shapes[0], params)


def _module_of(tr, y, x):
    """The module of the plain translation's result when it is one call of it on x, else None."""
    if y.op == "call_module" and len(y.args) == 1 and y.args[0] is x and not y.kwargs:
        return y.target
    return None


def shared_module(tr, node, ins, shapes, params):
    """Nodes of this spelling with equal op, attrs and params call one module instance."""
    key = json.dumps([node["op"], node.get("attrs", {}), node.get("params", {})], sort_keys=True)
    shared = tr.__dict__.setdefault("shared_modules", {})
    if key in shared:
        target, shape = shared[key]
        return tr.fx.call_module(target, (ins[0],)), shape
    y, shape = tr.emit_plain(node)
    target = _module_of(tr, y, ins[0])
    if target is not None:
        shared[key] = (target, shape)
    return y, shape


def hooked(pre):
    def write(tr, node, ins, shapes, params):
        y, shape = tr.emit_plain(node)
        target = _module_of(tr, y, ins[0])
        if target is not None:
            mod = tr.root.get_submodule(target)
            if pre:
                mod.register_forward_pre_hook(noop_forward_pre_hook)
            else:
                mod.register_forward_hook(noop_forward_hook)
        return y, shape
    return write


def python_scalar(tr, node, ins, shapes, params):
    f = T.BINARY[node["op"]]
    if "A" in params:
        return tr.fn(f, float(params["A"].item()), ins[0]), shapes[0]
    return tr.fn(f, ins[0], float(params["B"].item())), shapes[0]


def inplace_binary(tr, node, ins, shapes, params):
    f = operator.iadd if node["op"] == "Add" else operator.imul
    other = tr.constant(node, "B", params["B"]) if "B" in params else ins[1]
    return tr.fn(f, ins[0], other), shapes[0]


def _reshape_out(node, s):
    if node["op"] == "Flatten":
        axis = T.attr(node, "axis", 1)
        axis = axis + len(s) if axis < 0 else axis
        return [T.prod(s[:axis]), T.prod(s[axis:])]
    return T.reshape_target(s, T.attr(node, "shape", None))


def view(tr, node, ins, shapes, params):
    out = _reshape_out(node, shapes[0])
    return tr.fx.call_method("view", (ins[0],) + tuple(out)), out


def flatten(tr, node, ins, shapes, params):
    return tr.fn(torch.flatten, ins[0], 1), _reshape_out(node, shapes[0])


def f_max_pool2d(tr, node, ins, shapes, params):
    s = shapes[0]
    kh, kw = T.attr(node, "kernel_shape", None)
    sh, sw = T.attr(node, "strides", [1, 1])
    t, l, b, r = T.attr(node, "pads", [0, 0, 0, 0])
    ceil = bool(T.attr(node, "ceil_mode", 0))
    out = [s[0], s[1], T.pool_output_size(s[2], kh, sh, t, b, ceil),
           T.pool_output_size(s[3], kw, sw, l, r, ceil)]
    return tr.fn(F.max_pool2d, ins[0], (kh, kw), (sh, sw), (t, l), ceil_mode=ceil), out


def mean_keepdim(tr, node, ins, shapes, params):
    s = shapes[0]
    return tr.fx.call_method("mean", (ins[0], (2, 3)), {"keepdim": True}), [s[0], s[1], 1, 1]


WRITERS = {
    "torch.F.relu": relu_function(F.relu),
    "torch.relu_": relu_function(torch.relu_),
    "torch.ReLU-inplace": relu_inplace_module,
    "torch.Tensor.relu_": relu_inplace_method,
    "torch.clamp-min": clamp_min,
    "torch.F.relu6": relu_function(F.relu6),
    "torch.Hardtanh": hardtanh,
    "torch.functional": functional_activation,
    "torch.conv-padding-same": conv_padding("same"),
    "torch.conv-padding-valid": conv_padding("valid"),
    "torch.F.conv2d": f_conv2d,
    "torch.conv-bias-add": conv_bias_add,
    "torch.Conv1d": conv1d,
    "torch.BatchNorm-affine-false": bn_affine_false,
    "torch.F.batch_norm": f_batch_norm,
    "torch.Identity": identity_module(nn.Identity),
    "torch.Dropout-eval": identity_module(lambda: nn.Dropout(0.5)),
    "torch.F.linear": f_linear,
    "torch.addmm": addmm,
    "torch.matmul-add": matmul_add,
    "torch.Linear-bias-add": linear_bias_add,
    "torch.shared-module": shared_module,
    "torch.forward-hook": hooked(False),
    "torch.forward-pre-hook": hooked(True),
    "torch.python-scalar": python_scalar,
    "torch.inplace-binary": inplace_binary,
    "torch.view": view,
    "torch.flatten": flatten,
    "torch.F.max_pool2d": f_max_pool2d,
    "torch.mean-keepdim": mean_keepdim,
}
# What the hello declares (fusefuzz then gives nodes only these).
SPELLINGS = sorted(WRITERS)


def emit(tr, node, ins, shapes, params):
    return WRITERS[node["spelling"]](tr, node, ins, shapes, params)
