"""A quantized fusefuzz graph as the float model a PyTorch user quantizes, plus where and how.

PyTorch's quantization flows start from a float nn.Module and decide themselves where tensors
are quantized (observers). A fusefuzz quantized graph says it explicitly (QuantizeLinear /
DequantizeLinear pairs, QLinearConv, QLinearAdd; docs/quantization.md). `split` turns the graph
into:

- a float graph JSON (for translate.py: nn.Conv2d / nn.BatchNorm2d / nn.ReLU modules in graph
  order): Q and DQ removed, QLinearConv expanded to Conv (weights and bias dequantized exactly as
  DequantizeLinear does) -> Add (the residual) -> activation, QLinearAdd to Add [-> Relu];
- the quantization points: float value name -> (scale, zero point, dtype), the values the graph
  quantizes; every consumer of a DequantizeLinear reads the quantization point's value;
- the integer inputs (fed to the model dequantized, so its first quantization gives back the
  integers exactly) and the integer outputs (answered as integers on the graph's grid);
- the weight grids of the convs: integers and per-channel scales (the weight observers re-snap
  the weight PyTorch hands them onto these integers).

What the flows cannot express is refused here with `translate.Unsupported` naming the node.
"""

import numpy as np

from translate import Unsupported, tensor_from_json

ACT_TYPES = {"uint8": (0, 255), "int8": (-128, 127)}
# Ops that commute with a quantization for s > 0 (Q(op(v)) = op(Q(v))): ReLU since Q(0) = z,
# ReLU6 and Clip as the clamp at Q(lo), Q(hi), max pooling, shape ops.
COMMUTING = ("Relu", "Relu6", "Clip", "MaxPool", "Identity", "Reshape", "Flatten")
# Ops PyTorch runs on the quantized tensor keeping its parameters: the commuting ones and the
# average pools (their integer mean rounded on the input's grid, which is what the graph's
# QuantizeLinear of the float mean under the same parameters says).
ON_INPUT_GRID = COMMUTING + ("AvgPool", "GlobalAvgPool")


class QParams:
    """Per-tensor activation quantization: float32 scale, integer zero point, 8-bit type."""

    def __init__(self, q, where):
        if q.get("axis", -1) not in (-1, None):
            raise Unsupported("%s: per-axis activation quantization (PyTorch's activations are "
                              "per tensor)" % where)
        if q["type"] not in ACT_TYPES:
            raise Unsupported("%s: %s activations" % (where, q["type"]))
        self.type = q["type"]
        self.scale = float(np.float32(q["scale"][0]))
        self.zero_point = int(q["zero_point"][0])
        if not self.scale > 0:
            raise Unsupported("%s: scale %r (PyTorch needs a positive scale)" % (where, self.scale))

    def key(self):
        return (self.type, self.scale, self.zero_point)

    def __eq__(self, other):
        return self.key() == other.key()

    def __repr__(self):
        return "%s s=%r z=%d" % (self.type, self.scale, self.zero_point)

    def dequantize(self, q):
        """ONNX DequantizeLinear in float32: (q - z) * s."""
        return (q.astype(np.float32) - np.float32(self.zero_point)) * np.float32(self.scale)


class WeightGrid:
    """A conv weight's integers and its scales per output channel (per tensor: one repeated)."""

    def __init__(self, ints, scales, per_channel):
        self.ints = ints  # float32 array of integers, shape [M, C/g, kH, kW]
        self.scales = scales  # float64 array [M] of float32 values
        self.per_channel = per_channel


def channel_column(scales, ndim):
    """Per-output-channel scales shaped to broadcast over a weight of rank ndim."""
    return scales.reshape((-1,) + (1,) * (ndim - 1))


def _pack(arr):
    arr = np.asarray(arr, dtype=np.float32)
    return {"shape": list(arr.shape), "data": [float(v) for v in arr.reshape(-1)]}


def _scales(q, m):
    s = [float(np.float32(v)) for v in q["scale"]]
    return np.array(s * m if len(s) == 1 else s, dtype=np.float64)


class Split:
    def __init__(self, graph):
        self.graph = graph
        self.nodes = []  # float graph nodes
        self.points = {}  # float value -> QParams: the values the graph quantizes
        self.int_inputs = {}  # graph input -> QParams (fed dequantized)
        self.int_outputs = {}  # graph output -> (float value, QParams)
        self.dq_outputs = {}  # graph output that dequantizes a point -> its QParams
        self.weights = {}  # float conv node name -> WeightGrid
        self.origin = {}  # float node name -> graph node name (QLinear* expand to several)
        self.alias = {}  # graph value -> float value it reads (after Q/DQ removal)
        self.int_values = {}  # graph integer value -> (float value, QParams)
        self.float_uses = {}  # float value -> number of float consumers of the raw value
        self.dequantized = set()  # graph values that are DequantizeLinear outputs
        self.shared = set()  # points on the input's grid (order-preserving ops on integers)
        consumers = {}
        for n in graph["nodes"]:
            for i in n["inputs"]:
                consumers.setdefault(i, []).append(n)
        for inp in graph["inputs"]:
            users = consumers.get(inp["name"], [])
            integer = [u for u in users if u["op"] in ("DequantizeLinear", "QLinearConv",
                                                       "QLinearAdd")]
            if integer and len(integer) != len(users):
                raise Unsupported("graph input %s is read as integers and as floats" % inp["name"])
            if integer:
                p = self.role_params(integer[0], inp["name"])
                self.int_inputs[inp["name"]] = p
                self.int_values[inp["name"]] = (inp["name"], p)
                self.points[inp["name"]] = p
        import translate
        for n in translate.topological(graph["nodes"]):
            self.emit(n)
        for o in graph["outputs"]:
            if o in self.int_values:
                self.int_outputs[o] = self.int_values[o]
        for v, p in self.points.items():
            if self.float_uses.get(v, 0):
                raise Unsupported("value %s is quantized and also read in float" % v)

    def role_params(self, node, value):
        """The params under which `node` reads its integer input `value`."""
        if node["op"] == "DequantizeLinear":
            return QParams(node["quant"]["x"], "node %s quant x" % node["name"])
        roles = {"QLinearConv": ["x", "r"], "QLinearAdd": ["a", "b"]}[node["op"]]
        k = node["inputs"].index(value)
        return QParams(node["quant"][roles[k]], "node %s quant %s" % (node["name"], roles[k]))

    def read_float(self, node, value):
        """A float input of a float op: the raw float value (not through a DQ)."""
        if value in self.int_values:
            raise Unsupported("node %s (%s) reads the integers %s directly" %
                              (node["name"], node["op"], value))
        v = self.alias.get(value, value)
        if value not in self.dequantized:  # a DQ output reads the quantized value, not v
            self.float_uses[v] = self.float_uses.get(v, 0) + 1
        return v

    def read_int(self, node, value, p):
        """An integer input read under params p: the float value it quantizes."""
        if value not in self.int_values:
            raise Unsupported("node %s (%s) reads %s, which holds no integers" %
                              (node["name"], node["op"], value))
        real, have = self.int_values[value]
        if have != p:
            raise Unsupported("node %s reads %s as %r, quantized as %r" %
                              (node["name"], value, p, have))
        return real

    def add(self, origin, node):
        self.nodes.append(node)
        self.origin[node["name"]] = origin
        return node["outputs"][0]

    def quantize(self, value, out, p):
        if value in self.points and self.points[value] != p:
            raise Unsupported("value %s is quantized twice with different parameters" % value)
        self.points[value] = p
        self.int_values[out] = (value, p)

    def emit(self, n):
        op, name = n["op"], n["name"]
        if op == "QuantizeLinear":
            p = QParams(n["quant"]["y"], "node %s quant y" % name)
            v = self.alias.get(n["inputs"][0], n["inputs"][0])
            if n["inputs"][0] in self.int_values:
                raise Unsupported("node %s quantizes integers" % name)
            self.quantize(v, n["outputs"][0], p)
        elif op == "DequantizeLinear":
            p = QParams(n["quant"]["x"], "node %s quant x" % name)
            self.alias[n["outputs"][0]] = self.read_int(n, n["inputs"][0], p)
            self.dequantized.add(n["outputs"][0])
        elif op == "QLinearConv":
            self.qlinear_conv(n)
        elif op == "QLinearAdd":
            qa = QParams(n["quant"]["a"], "node %s quant a" % name)
            qb = QParams(n["quant"]["b"], "node %s quant b" % name)
            a = self.read_int(n, n["inputs"][0], qa)
            b = self.read_int(n, n["inputs"][1], qb)
            y = self.add(name, {"name": name, "op": "Add", "inputs": [a, b],
                                "outputs": [name + "__sum"]})
            if n.get("attrs", {}).get("activation", "none") == "relu":
                y = self.add(name, {"name": name + "__relu", "op": "Relu", "inputs": [y],
                                    "outputs": [name + "__relu"]})
            self.quantize(y, n["outputs"][0], QParams(n["quant"]["y"], "node %s quant y" % name))
        elif op in ("MaxPool", "Identity", "Reshape", "Flatten") and n["inputs"][0] in \
                self.int_values:
            # Order-preserving ops on integers (s > 0): the same op on the real values, on the
            # same grid (PyTorch runs them on quantized tensors, sharing the input's params).
            real, p = self.int_values[n["inputs"][0]]
            node = dict(n, inputs=[real], outputs=[name + "__real"], quant={})
            y = self.add(name, node)
            self.points[y] = p
            self.shared.add(y)
            self.int_values[n["outputs"][0]] = (y, p)
        else:
            node = dict(n, inputs=[self.read_float(n, i) for i in n["inputs"]])
            node.pop("quant", None)
            self.add(name, node)
            if op in ("Conv", "FusedConv"):
                self.weight_grid(n, name, "W")
            elif op == "Gemm":
                self.weight_grid(n, name, "B")

    def weight_grid(self, n, name, role):
        """The grid of a conv's W or of a Gemm's B, in the orientation of PyTorch's weight
        (nn.Conv2d [M, C/g, kH, kW], nn.Linear [N, K]): per output channel, axis 0."""
        q = n.get("quant", {}).get(role)
        if q is None:
            return
        w = tensor_from_json(n["params"][role]).numpy()
        if role == "B":
            a = n.get("attrs", {})
            plain = a.get("alpha", 1.0) == 1.0 and a.get("beta", 1.0) == 1.0 and \
                not a.get("transA", 0)
            per_tensor = q.get("axis", -1) in (-1, None)
            if not plain or not (a.get("transB", 0) or per_tensor):
                raise Unsupported("node %s: a Gemm quantized as nn.Linear needs alpha = beta = 1, "
                                  "no transA, and transB or a per-tensor weight grid" % name)
            if not a.get("transB", 0):
                w = w.T  # B [K, N] -> nn.Linear's weight [N, K]
        if q["type"] != "int8" or any(z != 0 for z in q["zero_point"]):
            raise Unsupported("node %s: weight grid %s with zero points %s (PyTorch's weights "
                              "are int8, symmetric)" % (name, q["type"], q["zero_point"]))
        scales = _scales(q, w.shape[0])
        ints = np.rint(w.astype(np.float64) / channel_column(scales, w.ndim)).astype(np.float32)
        self.weights[name] = WeightGrid(ints, scales, q.get("axis", -1) not in (-1, None))

    def qlinear_conv(self, n):
        name = n["name"]
        qx = QParams(n["quant"]["x"], "node %s quant x" % name)
        qw = n["quant"]["w"]
        x = self.read_int(n, n["inputs"][0], qx)
        w_int = tensor_from_json(n["params"]["W"]).numpy().astype(np.float32)
        m = w_int.shape[0]
        s_w = _scales(qw, m)
        w = (w_int * s_w.astype(np.float32).reshape(-1, 1, 1, 1)).astype(np.float32)
        params = {"W": _pack(w)}
        if "B" in n.get("params", {}):
            b_int = tensor_from_json(n["params"]["B"]).numpy().astype(np.float32)
            s_b = (np.float32(qx.scale) * s_w.astype(np.float32)).astype(np.float32)
            params["B"] = _pack(b_int * s_b)
        conv = {"name": name, "op": "Conv", "inputs": [x], "outputs": [name + "__conv"],
                "attrs": n.get("attrs", {}), "params": params}
        y = self.add(name, conv)
        self.weights[name] = WeightGrid(w_int, s_w, qw.get("axis", -1) not in (-1, None))
        for k, step in enumerate(n.get("epilogue", [])):
            if step["kind"] == "add":
                qr = QParams(n["quant"]["r"], "node %s quant r" % name)
                r = self.read_int(n, n["inputs"][step.get("input", 1)], qr)
                y = self.add(name, {"name": name + "__add", "op": "Add", "inputs": [y, r],
                                    "outputs": [name + "__add"]})
            elif step["kind"] == "activation":
                act = {"name": "%s__%s" % (name, step["op"].lower()), "op": step["op"],
                       "inputs": [y], "outputs": ["%s__act%d" % (name, k)],
                       "attrs": step.get("attrs", {})}
                y = self.add(name, act)
            else:
                raise Unsupported("node %s: QLinearConv epilogue step %s" % (name, step["kind"]))
        self.quantize(y, n["outputs"][0], QParams(n["quant"]["y"], "node %s quant y" % name))

    def origin_of_value(self, value):
        """The request's graph node behind a float value (None for a graph input)."""
        for n in self.nodes:
            if n["outputs"][0] == value:
                return self.origin[n["name"]]
        return None

    def same_grid_source(self, value):
        """The point `value` is computed from on its own grid: the input of an op PyTorch runs
        on the quantized tensor (ON_INPUT_GRID) whose input is a point with the same
        parameters; else None. PyTorch runs
        such ops on the quantized tensor as it is (its params shared), so no observer sits at
        `value` and none is needed: Q(op(v)) = op(Q(v))."""
        for n in self.nodes:
            if n["outputs"][0] == value:
                if n["op"] in ON_INPUT_GRID and n["inputs"] and n["inputs"][0] in self.points and \
                        self.points[n["inputs"][0]] == self.points.get(value):
                    return n["inputs"][0]
                return None
        return None

    def commuting_successor(self, value):
        """The output of the only consumer of `value` when that consumer commutes with a
        quantization (Q(op(v)) = op(Q(v)) for s > 0: ReLU since Q(0) = z, ReLU6 and Clip as
        the clamp at Q(lo), Q(hi), max pooling, shape ops); else None."""
        users = [n for n in self.nodes if value in n["inputs"]]
        if len(users) != 1 or users[0]["op"] not in COMMUTING:
            return None
        return users[0]["outputs"][0]

    def float_graph(self):
        """The float graph for translate.py: inputs real, outputs the quantized values' floats."""
        outputs = []
        for o in self.graph["outputs"]:
            if o in self.int_values:
                outputs.append(self.int_values[o][0])
                continue
            v = self.alias.get(o, o)
            if v in self.points and o not in self.dequantized:
                raise Unsupported("graph output %s is read in float and also quantized" % o)
            if v in self.points:
                self.dq_outputs[o] = self.points[v]  # a DequantizeLinear output
            outputs.append(v)
        if len(set(outputs)) != len(outputs):
            raise Unsupported("two graph outputs are one value of the float model")
        return {"format": "fusefuzz-graph", "version": self.graph.get("version", 2),
                "inputs": self.graph["inputs"], "nodes": self.nodes, "outputs": outputs}


def split(graph):
    if not any(n["op"] in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearAdd")
               for n in graph["nodes"]):
        raise Unsupported("a float graph: the quantization flows need a quantized graph")
    return Split(graph)

