"""fusefuzz graph JSON -> a torch.fx GraphModule in float32 with the graph's exact semantics.

fusefuzz ops follow ONNX; where a PyTorch module differs (asymmetric pads, pool pads above k/2,
ONNX ceil mode with explicit pads, norms over one element, HardSigmoid's alpha and beta) the op
is decomposed into plain tensor operations (README.md, "ONNX semantics in PyTorch").

Modules are declared on the root module in graph order and called through `call_module`, as a
hand-written model would; binary ops, Pad, Concat and the decompositions' arithmetic are
functions, so they do not appear among the modules (this is what the `fuse_modules` mode's
declaration-order grouping sees).
"""

import base64
import operator
import re

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

import spellings


class Unsupported(Exception):
    """The graph uses something this adapter does not translate (answered `unsupported`)."""


def tensor_from_json(t):
    shape = [int(d) for d in t["shape"]]
    if "b64" in t:
        arr = np.frombuffer(base64.b64decode(t["b64"]), dtype="<f4")
    else:
        # Numbers, or the strings "nan", "inf", "-inf", which float() reads.
        arr = np.array([float(v) for v in t["data"]], dtype=np.float32)
    return torch.from_numpy(arr.astype(np.float32).reshape(shape).copy())


def tensor_to_json(t):
    if t.layout != torch.strided:
        t = t.to_dense()
    arr = t.detach().contiguous().to(torch.float32).numpy().astype("<f4")
    return {"shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode("ascii")}


# ---- ONNX semantics that no torch.nn module has -------------------------------------------------

class OnnxMaxPool2d(nn.Module):
    """MaxPool with pads [t, l, b, r] of any size below the kernel and ONNX's ceil mode: the
    input padded with -inf exactly to the extent the ONNX output windows cover (negative end
    pads crop rows no window reaches), then a plain floor-mode max_pool2d."""

    def __init__(self, kernel, stride, pad):
        super().__init__()
        self.kernel = list(kernel)
        self.stride = list(stride)
        self.pad = list(pad)  # F.pad order: left, right, top, bottom

    def forward(self, x):
        x = F.pad(x, self.pad, mode="constant", value=float("-inf"))
        return F.max_pool2d(x, self.kernel, self.stride)


class OnnxAvgPool2d(nn.Module):
    """AvgPool with any pads below the kernel, ONNX ceil mode and count_include_pad: window
    sums of the zero-padded input (divisor_override=1), divided by a precomputed count of the
    cells each window may count (input cells, or input plus declared pads)."""

    def __init__(self, kernel, stride, pad, divisor):
        super().__init__()
        self.kernel = list(kernel)
        self.stride = list(stride)
        self.pad = list(pad)
        self.register_buffer("divisor", divisor)

    def forward(self, x):
        x = F.pad(x, self.pad, mode="constant", value=0.0)
        return F.avg_pool2d(x, self.kernel, self.stride, divisor_override=1) / self.divisor


class BroadcastPReLU(nn.Module):
    """ONNX PRelu with a slope that broadcasts from the right along other dims than the channel
    ([W], [H, W], [C, H, W], ...), which nn.PReLU (one weight per channel) cannot hold."""

    def __init__(self, slope):
        super().__init__()
        self.register_buffer("slope", slope)

    def forward(self, x):
        return torch.where(x >= 0, x, x * self.slope)


def prelu_is_per_channel(slope_shape, s):
    """True when a slope of `slope_shape` on an input of shape `s` varies along dim 1 only (or
    not at all), numpy broadcasting from the right: then nn.PReLU computes it."""
    if len(slope_shape) > len(s):
        return False
    padded = [1] * (len(s) - len(slope_shape)) + list(slope_shape)
    return all(d == 1 for i, d in enumerate(padded) if i != 1)


class OnnxHardSigmoid(nn.Module):
    """max(0, min(1, alpha*x + beta)); torch's Hardsigmoid is only alpha = 1/6, beta = 1/2
    (ONNX's defaults are 0.2 and 0.5)."""

    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha = float(alpha)
        self.beta = float(beta)

    def forward(self, x):
        return torch.clamp(x * self.alpha + self.beta, 0.0, 1.0)


class SingleElementNorm(nn.Module):
    """A norm whose every span is one element: (x - x) / sqrt(eps) * scale + bias, per channel
    (F.instance_norm and F.group_norm refuse such inputs in training-statistics mode)."""

    def __init__(self, scale, bias, eps, rank):
        super().__init__()
        per_channel = [1, -1] + [1] * (rank - 2)
        self.register_buffer("scale", scale.reshape(per_channel))
        self.register_buffer("bias", bias.reshape(per_channel))
        self.register_buffer("sigma", torch.tensor(float(eps)).sqrt())

    def forward(self, x):
        return (x - x) / self.sigma * self.scale + self.bias


# ---- shapes (the ONNX output-size rules) ---------------------------------------------------

def pool_output_size(size, kernel, stride, pad_begin, pad_end, ceil_mode):
    avail = size + pad_begin + pad_end - kernel
    out = (-(-avail // stride) if ceil_mode else avail // stride) + 1
    # ONNX/PyTorch: in ceil mode a last window that would start in the end padding is dropped.
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


def conv_output_size(size, kernel, stride, dilation, pad_begin, pad_end):
    return (size + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) // stride + 1


def prod(dims):
    p = 1
    for d in dims:
        p *= int(d)
    return p


def reshape_target(shape, target):
    """ONNX Reshape (allowzero 0): 0 copies the input dim, one -1 takes the rest."""
    out = [int(shape[i]) if d == 0 else int(d) for i, d in enumerate(target)]
    if -1 in out:
        known = prod(d for d in out if d != -1)
        out[out.index(-1)] = prod(shape) // known
    return out


def broadcast(a, b):
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    return [max(x, y) if min(x, y) == 1 else x for x, y in zip(a, b)]


# ---- the translation -----------------------------------------------------------------------

def attr(node, name, default):
    return node.get("attrs", {}).get(name, default)


def fattr(node, name, default):
    v = attr(node, name, default)
    return float(v)  # "nan"/"inf" strings and integers alike


class Translation:
    """The GraphModule plus what the optimizing modes need: the modules in declaration order
    (name, graph node name, module) and the graph node behind each module name."""

    def __init__(self, graph_json):
        self.root = nn.Module()
        self.fx = torch.fx.Graph()
        self.modules = []  # (module name, graph node name, module) in declaration order
        self.node_of_module = {}
        self.env = {}  # fusefuzz value name -> fx node
        self.shape = {}  # fusefuzz value name -> shape
        self.names = set()
        g = graph_json
        # Graph format 1 read a PRelu slope [C] per channel; 2 broadcasts it from the right.
        self.version = int(g.get("version", 2))
        for inp in g["inputs"]:
            self.env[inp["name"]] = self.fx.placeholder(self.unique("in_" + inp["name"]))
            self.shape[inp["name"]] = [int(d) for d in inp["shape"]]
        for node in topological(g["nodes"]):
            out = node["outputs"][0]
            self.env[out], self.shape[out] = self.emit(node)
        self.fx.output(tuple(self.env[o] for o in g["outputs"]))
        self.output_names = list(g["outputs"])
        self.input_names = [i["name"] for i in g["inputs"]]
        self.module = torch.fx.GraphModule(self.root, self.fx)
        self.module.eval()
        for p in self.module.parameters():
            p.requires_grad_(False)

    # -- helpers --

    def unique(self, name):
        base = re.sub(r"\W", "_", name)
        if not base or base[0].isdigit():
            base = "_" + base
        cand, k = base, 1
        while cand in self.names:
            k += 1
            cand = "%s_%d" % (base, k)
        self.names.add(cand)
        return cand

    def call_module(self, node, module, args, suffix=""):
        name = self.unique("m_" + node["name"] + suffix)
        self.root.add_module(name, module)
        self.modules.append((name, node["name"], module))
        self.node_of_module[name] = node["name"]
        return self.fx.call_module(name, tuple(args))

    def constant(self, node, key, tensor):
        name = self.unique("c_" + node["name"] + "_" + key)
        self.root.register_buffer(name, tensor)
        return self.fx.get_attr(name)

    def fn(self, f, *args, **kwargs):
        return self.fx.call_function(f, tuple(args), kwargs)

    # -- ops --

    def emit(self, node):
        if node.get("spelling") in spellings.WRITERS:
            # Written the way the spelling says (spellings.py); same math.
            ins = [self.env[i] for i in node["inputs"]]
            shapes = [self.shape[i] for i in node["inputs"]]
            params = {k: tensor_from_json(v) for k, v in node.get("params", {}).items()}
            return spellings.emit(self, node, ins, shapes, params)
        return self.emit_plain(node)

    def emit_plain(self, node):
        op = node["op"]
        ins = [self.env[i] for i in node["inputs"]]
        shapes = [self.shape[i] for i in node["inputs"]]
        params = {k: tensor_from_json(v) for k, v in node.get("params", {}).items()}
        x, s = (ins[0], shapes[0]) if ins else (None, None)
        if op in ("Conv", "FusedConv"):
            return self.conv(node, ins, shapes, params)
        if op == "BatchNorm":
            return self.batch_norm(node, x, s, params), s
        if op in ("LayerNorm", "GroupNorm", "InstanceNorm"):
            return self.norm(node, x, s, params), s
        if op in ACTIVATIONS:
            return self.activation(node, op, node.get("attrs", {}), params, x, s), s
        if op in BINARY:
            return self.binary(node, ins, shapes, params)
        if op == "Pad":
            t, l, b, r = attr(node, "pads", None)
            mode = attr(node, "mode", "constant")
            value = fattr(node, "value", 0.0)
            if mode == "constant":
                y = self.fn(F.pad, x, [l, r, t, b], mode="constant", value=value)
            elif mode in ("reflect", "edge", "wrap"):
                torch_mode = {"reflect": "reflect", "edge": "replicate", "wrap": "circular"}[mode]
                y = self.fn(F.pad, x, [l, r, t, b], mode=torch_mode)
            else:
                raise Unsupported("Pad mode %s" % mode)
            return y, [s[0], s[1], s[2] + t + b, s[3] + l + r]
        if op in ("MaxPool", "AvgPool"):
            return self.pool(node, x, s)
        if op == "GlobalAvgPool":
            return self.call_module(node, nn.AdaptiveAvgPool2d(1), [x]), [s[0], s[1], 1, 1]
        if op == "Concat":
            axis = attr(node, "axis", 1)
            axis = axis + len(shapes[0]) if axis < 0 else axis
            out = list(shapes[0])
            out[axis] = sum(sh[axis] for sh in shapes)
            return self.fn(torch.cat, list(ins), axis), out
        if op == "Identity":
            return x, s
        if op == "Flatten":
            axis = attr(node, "axis", 1)
            axis = axis + len(s) if axis < 0 else axis
            out = [prod(s[:axis]), prod(s[axis:])]
            return self.fn(torch.reshape, x, tuple(out)), out
        if op == "Reshape":
            out = reshape_target(s, attr(node, "shape", None))
            return self.fn(torch.reshape, x, tuple(out)), out
        if op in REDUCE:
            axes = sorted(a + len(s) if a < 0 else a for a in attr(node, "axes", None))
            keep = attr(node, "keepdims", 1) == 1
            out = [1 if d in axes else n for d, n in enumerate(s) if keep or d not in axes]
            return self.fn(REDUCE[op], x, dim=tuple(axes), keepdim=keep), out
        if op == "Softmax":  # ONNX opset-13 semantics: one axis, as torch's
            return self.fn(torch.softmax, x, attr(node, "axis", -1)), s
        if op == "Transpose":
            perm = attr(node, "perm", None)
            return self.fn(torch.permute, x, tuple(perm)), [s[p] for p in perm]
        if op == "Pow":
            return self.fn(torch.pow, x, fattr(node, "exponent", 2.0)), s
        if op in MATH:
            return self.fn(MATH[op], x), s
        if op == "Gemm":
            return self.gemm(node, x, s, params)
        if op == "MatMul":
            b = params["B"]
            y = self.fn(torch.matmul, x, self.constant(node, "B", b))
            return y, list(s[:-1]) + [int(b.shape[1])]
        raise Unsupported("op %s" % op)

    def gemm(self, node, x, s, params):
        """ONNX Gemm: alpha * A' B' + beta * C, then the epilogue's activations. The plain
        form (alpha = beta = 1, no transposed A, C absent or one bias per column) is nn.Linear,
        as a real model is written, so the modes' Linear fusions see it."""
        alpha, beta = fattr(node, "alpha", 1.0), fattr(node, "beta", 1.0)
        trans_a, trans_b = attr(node, "transA", 0), attr(node, "transB", 0)
        b = params["B"].t() if trans_b else params["B"]  # B' [K, N]
        k, n = int(b.shape[0]), int(b.shape[1])
        m = s[1] if trans_a else s[0]
        c = params.get("C")
        column_bias = c is None or (c.numel() == n and (c.dim() == 1 or c.shape[0] == 1) and n > 1)
        if alpha == 1.0 and beta == 1.0 and not trans_a and column_bias:
            linear = nn.Linear(k, n, bias=c is not None)
            with torch.no_grad():
                linear.weight.copy_(b.t())
                if c is not None:
                    linear.bias.copy_(c.reshape(-1))
            y = self.call_module(node, linear, [x])
        else:
            a = self.fn(torch.t, x) if trans_a else x
            y = self.fn(torch.mm, a, self.constant(node, "B", b.contiguous()))
            if alpha != 1.0:
                y = self.fn(operator.mul, y, alpha)
            if c is not None:
                term = self.constant(node, "C", c)
                if beta != 1.0:
                    term = self.fn(operator.mul, term, beta)
                y = self.fn(operator.add, y, term)
        out = [m, n]
        for i, step in enumerate(node.get("epilogue", [])):
            sp = {name: tensor_from_json(v) for name, v in step.get("params", {}).items()}
            if step["kind"] == "activation":
                y = self.activation(node, step["op"], step.get("attrs", {}), sp, y, out,
                                    suffix="_ep%d" % i)
            elif step["kind"] == "clamp":
                a = step.get("attrs", {})
                y = self.fn(torch.clamp, y, float(a["min"]), float(a["max"]))
            else:
                raise Unsupported("Gemm epilogue step %s" % step["kind"])
        return y, out

    def conv(self, node, ins, shapes, params):
        x, s = ins[0], shapes[0]
        w = params["W"]
        m, cg, kh, kw = w.shape
        sh, sw = attr(node, "strides", [1, 1])
        dh, dw = attr(node, "dilations", [1, 1])
        t, l, b, r = attr(node, "pads", [0, 0, 0, 0])
        group = attr(node, "group", 1)
        symmetric = t == b and l == r
        if not symmetric:
            # nn.Conv2d pads both sides equally; ONNX pads may differ per side.
            x = self.fn(F.pad, x, [l, r, t, b])
        conv = nn.Conv2d(cg * group, m, (kh, kw), stride=(sh, sw), dilation=(dh, dw),
                         padding=(t, l) if symmetric else 0, groups=group, bias="B" in params)
        with torch.no_grad():
            conv.weight.copy_(w)
            if "B" in params:
                conv.bias.copy_(params["B"])
        y = self.call_module(node, conv, [x])
        out = [s[0], m, conv_output_size(s[2], kh, sh, dh, t, b),
               conv_output_size(s[3], kw, sw, dw, l, r)]
        for k, step in enumerate(node.get("epilogue", [])):
            kind = step["kind"]
            sp = {n: tensor_from_json(v) for n, v in step.get("params", {}).items()}
            if kind == "scale_shift":
                scale = self.constant(node, "scale%d" % k, sp["scale"].reshape(1, -1, 1, 1))
                shift = self.constant(node, "shift%d" % k, sp["shift"].reshape(1, -1, 1, 1))
                y = self.fn(operator.add, self.fn(operator.mul, y, scale), shift)
            elif kind == "add":
                y = self.fn(operator.add, y, ins[step["input"]])
            elif kind == "activation":
                y = self.activation(node, step["op"], step.get("attrs", {}), sp, y, out,
                                    suffix="_ep%d" % k)
            elif kind == "clamp":
                a = step.get("attrs", {})
                y = self.fn(torch.clamp, y, float(a["min"]), float(a["max"]))
            else:
                raise Unsupported("epilogue step %s" % kind)
        return y, out

    def batch_norm(self, node, x, s, params):
        c = s[1]
        eps = fattr(node, "epsilon", 1e-5)
        bn = (nn.BatchNorm2d if len(s) == 4 else nn.BatchNorm1d)(c, eps=eps)
        with torch.no_grad():
            bn.weight.copy_(params["scale"])
            bn.bias.copy_(params["bias"])
            bn.running_mean.copy_(params["mean"])
            bn.running_var.copy_(params["var"])
        bn.eval()
        return self.call_module(node, bn, [x])

    def norm(self, node, x, s, params):
        op = node["op"]
        eps = fattr(node, "epsilon", 1e-5)
        scale, bias = params["scale"], params["bias"]
        if op == "LayerNorm":
            # scale has the shape of the normalized dims [axis, rank).
            ln = nn.LayerNorm(list(scale.shape), eps=eps)
            with torch.no_grad():
                ln.weight.copy_(scale)
                ln.bias.copy_(bias)
            return self.call_module(node, ln, [x])
        c = s[1]
        groups = attr(node, "num_groups", None) if op == "GroupNorm" else c
        span = c // groups
        for d in s[2:]:
            span *= d
        if span == 1:
            return self.call_module(node, SingleElementNorm(scale, bias, eps, len(s)), [x])
        if op == "GroupNorm":
            mod = nn.GroupNorm(groups, c, eps=eps)
        else:
            # affine, and statistics of the input (not running ones), in eval mode too.
            mod = nn.InstanceNorm2d(c, eps=eps, affine=True, track_running_stats=False)
        with torch.no_grad():
            mod.weight.copy_(scale)
            mod.bias.copy_(bias)
        return self.call_module(node, mod, [x])

    def activation(self, node, op, attrs, params, x, s, suffix=""):
        a = lambda name, d: float(attrs.get(name, d))
        if op == "Relu":
            mod = nn.ReLU()
        elif op == "Relu6":
            mod = nn.ReLU6()
        elif op == "Clip":
            return self.fn(torch.clamp, x, a("min", None), a("max", None))
        elif op == "LeakyRelu":
            mod = nn.LeakyReLU(a("alpha", 0.01))
        elif op == "PRelu":
            slope = params["slope"]
            if self.version == 1 and slope.dim() == 1 and len(s) >= 2 and slope.numel() == s[1]:
                slope = slope.reshape([s[1]] + [1] * (len(s) - 2))  # format 1: [C] per channel
            if prelu_is_per_channel(list(slope.shape), s):
                mod = nn.PReLU(num_parameters=slope.numel())
                with torch.no_grad():
                    mod.weight.copy_(slope.reshape(-1))
            else:
                mod = BroadcastPReLU(slope)
        elif op == "Elu":
            mod = nn.ELU(a("alpha", 1.0))
        elif op == "Sigmoid":
            mod = nn.Sigmoid()
        elif op == "HardSigmoid":
            mod = OnnxHardSigmoid(a("alpha", 0.2), a("beta", 0.5))
        elif op == "Tanh":
            mod = nn.Tanh()
        elif op == "Silu":
            mod = nn.SiLU()
        elif op == "HardSwish":
            mod = nn.Hardswish()  # x * relu6(x + 3) / 6, which is ONNX's alpha 1/6, beta 1/2
        elif op == "Gelu":
            approximate = attrs.get("approximate", "none")
            if approximate not in ("none", "tanh"):
                raise Unsupported("Gelu approximate=%s" % approximate)
            mod = nn.GELU(approximate=approximate)
        else:
            raise Unsupported("activation %s" % op)
        return self.call_module(node, mod, [x], suffix)

    def binary(self, node, ins, shapes, params):
        operands, shape_list, k = [], [], 0
        for side in ("A", "B"):
            if side in params:
                operands.append(self.constant(node, side, params[side]))
                shape_list.append(list(params[side].shape))
            else:
                operands.append(ins[k])
                shape_list.append(shapes[k])
                k += 1
        y = self.fn(BINARY[node["op"]], operands[0], operands[1])
        return y, broadcast(shape_list[0], shape_list[1])

    def pool(self, node, x, s):
        if attr(node, "dilations", [1, 1]) != [1, 1]:
            # The window helpers below step densely; dilated pools are not translated.
            raise Unsupported("%s dilations %s" % (node["op"], attr(node, "dilations", None)))
        kh, kw = attr(node, "kernel_shape", None)
        sh, sw = attr(node, "strides", [1, 1])
        t, l, b, r = attr(node, "pads", [0, 0, 0, 0])
        ceil = bool(attr(node, "ceil_mode", 0))
        oh = pool_output_size(s[2], kh, sh, t, b, ceil)
        ow = pool_output_size(s[3], kw, sw, l, r, ceil)
        out = [s[0], s[1], oh, ow]
        include_pad = bool(attr(node, "count_include_pad", 0))
        if t == b and l == r and 2 * t <= kh and 2 * l <= kw:
            # torch's own padding (at most half the kernel, symmetric) and ceil rule are ONNX's.
            if node["op"] == "MaxPool":
                mod = nn.MaxPool2d((kh, kw), (sh, sw), (t, l), ceil_mode=ceil)
            else:
                mod = nn.AvgPool2d((kh, kw), (sh, sw), (t, l), ceil_mode=ceil,
                                   count_include_pad=include_pad)
            return self.call_module(node, mod, [x]), out
        # Explicit padding to exactly the extent of the ONNX windows (may crop at the end).
        end_h = (oh - 1) * sh + kh - s[2] - t
        end_w = (ow - 1) * sw + kw - s[3] - l
        pad = [l, end_w, t, end_h]
        if node["op"] == "MaxPool":
            return self.call_module(node, OnnxMaxPool2d((kh, kw), (sh, sw), pad), [x]), out
        # Divisor: the cells of each window inside the input, or inside input + declared pads.
        lo_h, hi_h = (-t, s[2] + b) if include_pad else (0, s[2])
        lo_w, hi_w = (-l, s[3] + r) if include_pad else (0, s[3])
        div = np.zeros((oh, ow), dtype=np.float32)
        for i in range(oh):
            h0 = i * sh - t
            nh = max(0, min(h0 + kh, hi_h) - max(h0, lo_h))
            for j in range(ow):
                w0 = j * sw - l
                div[i, j] = nh * max(0, min(w0 + kw, hi_w) - max(w0, lo_w))
        mod = OnnxAvgPool2d((kh, kw), (sh, sw), pad, torch.from_numpy(div).reshape(1, 1, oh, ow))
        return self.call_module(node, mod, [x]), out


ACTIVATIONS = {"Relu", "Relu6", "Clip", "LeakyRelu", "PRelu", "Elu", "Sigmoid", "HardSigmoid",
               "Tanh", "Silu", "HardSwish", "Gelu"}
BINARY = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": operator.truediv,
          "Min": torch.minimum, "Max": torch.maximum}
REDUCE = {"ReduceMean": torch.mean, "ReduceSum": torch.sum, "ReduceMax": torch.amax}
# The building blocks of decomposed norms and activations (ONNX semantics = torch's).
MATH = {"Sqrt": torch.sqrt, "Reciprocal": torch.reciprocal, "Exp": torch.exp, "Log": torch.log,
        "Erf": torch.erf}
SUPPORTED_OPS = (["Conv", "FusedConv", "BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm"] +
                 sorted(ACTIVATIONS) + sorted(BINARY) +
                 ["Pad", "MaxPool", "AvgPool", "GlobalAvgPool", "Concat", "Identity", "Flatten",
                  "Reshape", "Gemm", "MatMul", "Pow", "Softmax", "Transpose"] + sorted(REDUCE) +
                 sorted(MATH))


def topological(nodes):
    """Stable topological order, as fusefuzz's reader: the earliest node whose inputs exist."""
    produced = {n["outputs"][0] for n in nodes}
    done, order, pending = set(), [], list(nodes)
    while pending:
        for i, n in enumerate(pending):
            if all(v in done or v not in produced for v in n["inputs"]):
                order.append(n)
                done.add(n["outputs"][0])
                del pending[i]
                break
        else:
            raise ValueError("graph has a cycle")
    return order


def translate(graph_json):
    return Translation(graph_json)
