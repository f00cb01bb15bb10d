// The Python of reproduce.py for the FX quantization modes: quant_modes.py, quant_fx.py and
// quant_observers.py of targets/pytorch, cut to one request (no protocol, no rewrites).
#include "report/torch_script_py.h"

namespace fusefuzz {

const char* const kTorchQuantFlows = R"PY(
from torch.ao.quantization.observer import ObserverBase

ENGINE = "qnnpack" if MODE == "ptq_fx_qnnpack" else "onednn"
DTYPES = {"uint8": (torch.quint8, 0, 255), "int8": (torch.qint8, -128, 127)}
QAT_STEPS = 3


class GraphActObserver(ObserverBase):
    """Answers the graph's scale and zero point of the tensor it observes (assigned after
    prepare), as the adapter's observer does: the flow runs on the graph's parameters."""

    def __init__(self, dtype=torch.quint8, **kwargs):
        super().__init__(dtype=dtype)
        self.qscheme = torch.per_tensor_affine
        self.quant_min, self.quant_max = (0, 255) if dtype == torch.quint8 else (-128, 127)
        self.eps = 2.0 ** -12
        self.params = None
        self.seen = None  # (min, max) seen in calibration
        self.calibrated = False

    def assign(self, params):
        self.params = params
        self.dtype, self.quant_min, self.quant_max = DTYPES[params[0]]

    def forward(self, x):
        if x.numel():
            lo, hi = float(x.detach().min()), float(x.detach().max())
            self.seen = (lo, hi) if self.seen is None else (min(lo, self.seen[0]),
                                                            max(hi, self.seen[1]))
        return x

    def calibrate(self):
        """No graph parameters for this tensor (ptq_eager's declaration-order groups fuse
        across the data flow): what a min/max observer would choose, as the user's would."""
        self.calibrated = True

    @torch.jit.export
    def calculate_qparams(self):
        if self.calibrated:
            lo, hi = self.seen if self.seen else (0.0, 0.0)
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            scale = max((hi - lo) / 255.0, float(torch.finfo(torch.float32).eps))
            zp = int(min(255, max(0, round(-lo / scale))))
            return torch.tensor([scale], dtype=torch.float), torch.tensor([zp], dtype=torch.int)
        if self.params is None:
            raise RuntimeError("an observer the graph gave no parameters")
        return (torch.tensor([self.params[1]], dtype=torch.float),
                torch.tensor([self.params[2]], dtype=torch.int))


class GraphWeightObserver(ObserverBase):
    """The graph's weight integers: its scales for an unchanged weight; for a weight PyTorch
    folded a BatchNorm into, per channel s'_c = sum|w'_c| / sum|q_c| (the re-snap that keeps
    the integers)."""

    def __init__(self, grid=None, per_channel_only=False, dtype=torch.qint8, **kwargs):
        super().__init__(dtype=dtype)
        # No grid: the global qconfig's, never asked (weights without a grid get no qconfig).
        self.ints, self.grid_scales, self.per_channel = grid if grid else (None, None, False)
        self.per_channel_only = per_channel_only
        self.qscheme = torch.per_channel_symmetric
        self.ch_axis = 0
        self.quant_min, self.quant_max = -128, 127
        self.eps = 2.0 ** -12
        self.weight = None

    def forward(self, w):
        self.weight = w.detach().clone()
        _, own = self.scales()
        per_tensor = own and not self.per_channel and not self.per_channel_only
        self.qscheme = torch.per_tensor_symmetric if per_tensor else torch.per_channel_symmetric
        return w

    def scales(self):
        column = [-1] + [1] * (self.ints.dim() - 1)
        own = self.ints.float() * self.grid_scales.float().reshape(column)
        if torch.equal(self.weight.float(), own):
            return self.grid_scales.clone(), True
        m = self.weight.shape[0]
        num = self.weight.double().reshape(m, -1).abs().sum(1)
        den = self.ints.double().reshape(m, -1).abs().sum(1)
        s = torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)),
                        self.grid_scales)
        s = torch.where(s > 0, s, self.grid_scales)
        return s.float().double(), False

    @torch.jit.export
    def calculate_qparams(self):
        s, _ = self.scales()
        if self.qscheme == torch.per_tensor_symmetric:
            return torch.tensor([float(s[0])], dtype=torch.float), torch.tensor([0], dtype=torch.int)
        return s.clone(), torch.zeros(len(s), dtype=torch.int64)


def qconfig(grid, qat):
    from torch.ao.quantization import QConfig
    from torch.ao.quantization.fake_quantize import FakeQuantize
    act = GraphActObserver
    weight = GraphWeightObserver.with_args(grid=grid, per_channel_only=qat)
    if qat:
        return QConfig(activation=FakeQuantize.with_args(observer=act),
                       weight=FakeQuantize.with_args(observer=weight, quant_min=-128,
                                                     quant_max=127, dtype=torch.qint8,
                                                     qscheme=torch.per_channel_symmetric,
                                                     ch_axis=0))
    return QConfig(activation=act.with_args(), weight=weight)


def weight_grid(model, name):
    """(integers, scales, per channel) of a module's weight on the graph's grid."""
    scales, per_channel = WEIGHT_GRIDS[name]
    w = getattr(model, name).weight.detach()
    s = torch.tensor(scales * w.shape[0] if len(scales) == 1 else scales, dtype=torch.float64)
    column = [-1] + [1] * (w.dim() - 1)
    ints = torch.round(w.double() / s.reshape(column)).float()
    return ints, s, per_channel


def new_model():
    model = Graph().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return torch.fx.symbolic_trace(model).eval()  # a GraphModule, as the adapter's model


def values_of_nodes(gm):
    """fx node name -> the variable (POINTS key) of the graph value it computes."""
    out = {}
    for n, v in zip([n for n in gm.graph.nodes if n.op == "placeholder"], INPUT_VARS):
        out[n.name] = v
    calls = [n for n in gm.graph.nodes if n.op in ("call_module", "call_function", "call_method")]
    if len(calls) != len(CALLS):
        raise RuntimeError("the traced model has %d calls, the script expects %d" %
                           (len(calls), len(CALLS)))
    for n, v in zip(calls, CALLS):
        if v:
            out[n.name] = v
    return out


def absorbed_chain_end(node, kept):
    """The last node of the pattern fused into `node` (BatchNorm, ReLU folded into it)."""
    cur = node
    while True:
        nxt = [u for u in cur.users if u.op == "call_module" and u.target not in kept]
        if len(nxt) != 1 or len(cur.users) != 1:
            return cur
        cur = nxt[0]


def is_zero_pad(node):
    return (node.op == "call_function" and node.target is F.pad and
            node.kwargs.get("mode", "constant") == "constant" and
            not node.kwargs.get("value", 0.0) and len(node.args) == 2)


def assign_observers(traced, prepared):
    """Each activation observer gets the parameters of the graph's quantization point of the
    tensor it observes, or of the point after it through ops that commute with quantization."""
    value_of = values_of_nodes(traced)
    orig = {n.name: n for n in traced.graph.nodes}
    kept = {n.target for n in prepared.graph.nodes if n.op == "call_module"}
    for n in prepared.graph.nodes:
        if n.op != "call_module" or not n.target.startswith("activation_post_process"):
            continue
        obs = getattr(prepared, n.target)
        obs = getattr(obs, "activation_post_process", obs)
        o = orig.get(n.args[0].name)
        if o is None:
            raise RuntimeError("prepare observes %s, not a node of the model" % n.args[0].name)
        if o.op == "call_module":
            o = absorbed_chain_end(o, kept)
        while o.name not in value_of and is_zero_pad(o):
            o = o.args[0]
        obs.assign(point_of(value_of.get(o.name), o.name))


def point_of(v, what):
    """The graph's parameters for the tensor of variable v: its quantization point, or the
    point after it through ops that commute with quantization."""
    while v is not None and v not in POINTS:
        v = COMMUTING.get(v)
    if v is None:
        raise RuntimeError("the flow quantizes %s, which the graph keeps in float" % what)
    return POINTS[v]


def backend_config():
    from torch.ao.quantization.backend_config import (get_native_backend_config,
                                                      get_qnnpack_backend_config)
    return get_qnnpack_backend_config() if MODE == "ptq_fx_qnnpack" else \
        get_native_backend_config()


def quantize_flow(inputs):
    """prepare_fx (prepare_qat_fx) -> calibration (QAT: train steps) -> convert_fx."""
    from torch.ao.quantization import QConfigMapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx, prepare_qat_fx
    qat = MODE == "qat_fx"
    traced = new_model()
    mapping = QConfigMapping().set_global(qconfig(None, qat))
    for name in WEIGHT_MODULES:
        grid = weight_grid(traced, name) if name in WEIGHT_GRIDS else None
        mapping.set_module_name(name, qconfig(grid, qat) if grid else None)
    config = backend_config()
    example = tuple(inputs)
    if qat:
        traced.train()
        prepared = prepare_qat_fx(traced, mapping, example, backend_config=config)
    else:
        prepared = prepare_fx(traced, mapping, example, backend_config=config)
    assign_observers(traced, prepared)
    if qat:
        # The QAT machinery runs, but learning rate 0 and frozen BN statistics keep the
        # weights the graph's.
        import torch.nn.intrinsic.qat as nniqat
        prepared.apply(nniqat.freeze_bn_stats)
        # freeze_bn_stats reaches only the ConvBn modules: a BatchNorm on its own stays frozen too.
        for m in prepared.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.eval()
        params = list(prepared.parameters())
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
    return convert_fx(prepared, backend_config=config), traced, config


def is_chain(traced, group):
    """Each module of the group the only consumer of the one before it."""
    nodes = {n.target: n for n in traced.graph.nodes if n.op == "call_module"}
    for a, b in zip(group, group[1:]):
        users = list(nodes[a].users)
        if len(users) != 1 or users[0] is not nodes[b]:
            return False
    return True


def chain_prefix(traced, group):
    for k in range(len(group), 1, -1):
        if is_chain(traced, group[:k]):
            return group[:k]
    return group[:1]


def eager_model(traced):
    """The eager user's model: a QuantStub after each input, a FloatFunctional per Add, a
    DeQuantStub before each output (quant_eager.py, build()); [(stub module, variable)]."""
    import operator
    from torch.ao.nn.quantized import FloatFunctional
    from torch.ao.quantization import DeQuantStub, QuantStub
    m, g = traced, traced.graph
    value_of = values_of_nodes(traced)
    stubs = []
    for n in list(g.nodes):
        if n.op == "call_function" and n.target is operator.add:
            name = "ff_" + n.name
            m.add_module(name, FloatFunctional())
            with g.inserting_before(n):
                add = g.call_method("add", (g.get_attr(name), n.args[0], n.args[1]))
            n.replace_all_uses_with(add)
            g.erase_node(n)
            stubs.append((name, value_of.get(n.name)))
    for n in list(g.nodes):
        if n.op == "placeholder":
            name = "quant_" + n.name
            m.add_module(name, QuantStub())
            with g.inserting_after(n):
                q = g.call_module(name, (n,))
            n.replace_all_uses_with(q, delete_user_cb=lambda user, q=q: user is not q)
            stubs.append((name, value_of.get(n.name)))
    out = [n for n in g.nodes if n.op == "output"][0]
    outs = []
    for k, o in enumerate(out.args[0]):
        m.add_module("dequant_%d" % k, DeQuantStub())
        with g.inserting_before(out):
            outs.append(g.call_module("dequant_%d" % k, (o,)))
    out.args = (tuple(outs),)
    g.lint()
    m.recompile()
    return stubs


def eager_flow(inputs):
    """fuse_modules with the declaration-order lists (groups past LIMIT cut to their data-flow
    chain) -> prepare -> calibration -> convert, as quant_eager.py runs it."""
    from torch.ao.quantization import fuse_modules
    from torch.ao.quantization.quantize import convert, prepare
    traced = new_model()
    groups = [list(gr) for gr in GROUPS]
    if LIMIT >= 0:
        groups = groups[:LIMIT] + [c for c in (chain_prefix(traced, gr) for gr in groups[LIMIT:])
                                   if len(c) > 1]
    value_of = values_of_nodes(traced)
    var_of_module = {n.target: value_of.get(n.name) for n in traced.graph.nodes
                     if n.op == "call_module"}
    chained = {gr[0]: is_chain(traced, gr) for gr in groups}
    ends = {gr[0]: var_of_module[gr[-1]] for gr in groups}
    grids = {name: weight_grid(traced, name) for name in WEIGHT_GRIDS}
    stubs = eager_model(traced)
    model = fuse_modules(traced, groups) if groups else traced
    model.qconfig = qconfig(None, False)
    for name in NODE_OF_MODULE:
        mod = model.get_submodule(name)
        if isinstance(mod, nn.Identity):
            continue
        conv = mod[0] if isinstance(mod, nn.Sequential) else mod
        if isinstance(conv, (nn.Conv2d, nn.Linear)):
            mod.qconfig = qconfig(grids[name], False) if name in grids else None
    prepare(model, inplace=True)
    fallback = []
    for name in NODE_OF_MODULE:
        mod = model.get_submodule(name)
        obs = getattr(mod, "activation_post_process", None)
        # nnq.ReLU6 ignores its observer (it runs on the input's grid): not a quantization.
        if obs is None or isinstance(mod, (nn.Identity, nn.ReLU6)):
            continue
        if name in chained and not chained[name]:
            fallback.append(obs)  # a group fused across the data flow: min/max calibration
        else:
            obs.assign(point_of(ends.get(name, var_of_module[name]), name))
    for name, var in stubs:
        obs = getattr(model.get_submodule(name), "activation_post_process", None)
        if obs is not None:
            obs.assign(point_of(var, name))
    for obs in fallback:
        obs.calibrate()
    with torch.no_grad():
        model(*inputs)  # calibration
    convert(model, inplace=True)
    return model


def fake_quant(x, scale, zero_point, dtype):
    return torch.quantize_per_tensor(x, scale, zero_point, dtype).dequantize()


def simulated():
    """The unoptimized run: the float model with the graph's quantization simulated by PyTorch
    (quantize_per_tensor -> dequantize at every quantization point), nothing fused."""
    gm = new_model()
    value_of = values_of_nodes(gm)
    g, done = gm.graph, set()
    for node in list(g.nodes):
        v = value_of.get(node.name)
        if v is None or v not in POINTS or v in done:
            continue
        done.add(v)
        kind, scale, zp = POINTS[v]
        with g.inserting_after(node):
            fq = g.call_function(fake_quant, (node, scale, zp, DTYPES[kind][0]))
        node.replace_all_uses_with(fq, delete_user_cb=lambda user, fq=fq: user is not fq)
    g.lint()
    gm.recompile()
    return gm


CLASSES = {}  # module -> its class after convert_fx (for the printout)


class FormRecorder(torch.fx.Interpreter):
    def __init__(self, module):
        super().__init__(module)
        self.quantized = {}

    def run_node(self, n):
        out = super().run_node(n)
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        self.quantized[n.name] = isinstance(first, torch.Tensor) and first.is_quantized
        return out


def module_forms(converted, traced, inputs):
    """Module -> "quantized", "reference" (dequantize, float op, quantize) or "float", from a
    run of the converted model; modules fused into another take its form."""
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
    forms = {}
    for n in converted.graph.nodes:
        if n.op == "call_module" and n.target in NODE_OF_MODULE:
            CLASSES[n.target] = "%s.%s" % (type(mods[n.target]).__module__,
                                           type(mods[n.target]).__name__)
            forms[n.target] = "reference" if isinstance(mods[n.target], reference) else \
                "quantized" if rec.quantized.get(n.name) else "float"
    for n in traced.graph.nodes:
        if n.op == "call_module" and n.target in kept and n.target in NODE_OF_MODULE:
            end, cur = absorbed_chain_end(n, kept), n
            while cur is not end:
                cur = next(iter(cur.users))
                forms.setdefault(cur.target, forms.get(n.target))
    return forms


def promised(traced, config):
    """The modules the backend config declares a quantized (quint8) form of on their own."""
    configs = config.configs.values() if isinstance(config.configs, dict) else config.configs
    types = set()
    for c in configs:
        p = c.pattern
        if isinstance(p, type) and issubclass(p, nn.Module) and \
                any(d.output_dtype == torch.quint8 for d in c.dtype_configs):
            types.add(p)
    return [name for name in NODE_OF_MODULE if type(getattr(traced, name)) in types]


def model_inputs():
    """Integer inputs fed dequantized ((q - z) * s in float32), as the adapter feeds them."""
    xs = []
    for i, t in enumerate(INPUTS):
        if i in INT_INPUTS:
            _, scale, zp = INT_INPUTS[i]
            t = (t - torch.tensor(float(zp))) * torch.tensor(scale, dtype=torch.float32)
        xs.append(t)
    return xs


def answer(outs):
    """The model's outputs as the graph's: integer outputs on the graph's grid."""
    flat = []
    for i, t in enumerate(outs):
        if t.is_quantized:
            t = t.dequantize()
        t = t.detach().float().contiguous()
        if i in DQ_OUTPUTS:
            kind, scale, zp = DQ_OUTPUTS[i]
            t = fake_quant(t, scale, zp, DTYPES[kind][0])
        if i in INT_OUTPUTS:
            kind, scale, zp = INT_OUTPUTS[i]
            t = torch.quantize_per_tensor(t, scale, zp, DTYPES[kind][0]).int_repr().float()
        flat.append(t.reshape(-1).tolist())
    return flat


def run(optimize):
    """(flat outputs, module forms or None): the flow, or the simulated quantization."""
    torch.backends.quantized.engine = ENGINE
    inputs = model_inputs()
    forms = None
    if optimize and MODE in ("ptq_eager", "ptq_eager_dataflow"):
        module = eager_flow(inputs)
    elif optimize:
        module, traced, config = quantize_flow(inputs)
        forms = {"forms": module_forms(module, traced, inputs),
                 "promised": promised(traced, config)}
    else:
        module = simulated()
    with torch.no_grad():
        outs = module(*inputs)
    if not isinstance(outs, (tuple, list)):
        outs = (outs,)
    return answer(outs), forms
)PY";

}  // namespace fusefuzz
