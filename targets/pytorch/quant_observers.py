"""Observers that honour the graph's quantization parameters (README.md, "Quantization").

PyTorch's flows ask an observer for (scale, zero point) at convert time. These observers run
during calibration like any other (they record the range they saw, for the report) but answer
the graph's parameters:

- GraphActObserver: the parameters of the graph's quantization point that the adapter assigned
  to this observer after prepare (`assign`); an observer left unassigned refuses to answer, so a
  tensor that the flow quantizes and the graph does not is never silently given numbers.
- GraphWeightObserver: the graph's weight integers, on the scales that make the weight PyTorch
  hands it land on those integers. Unchanged weight: the graph's scales exactly (per tensor or per
  channel, as declared). A weight PyTorch folded a BatchNorm into (w' = w * gamma / std per output
  channel): per channel s'_c = sum|w'_c| / sum|q_c|, the re-snap that keeps the integers (negated
  where gamma < 0), as fusefuzz's legal `qdq-conv-bn-fold` does. A wrong fold (wrong eps, wrong
  channel) still lands near other integers or other scales, and the outputs show it.
"""

import numpy as np
import torch
from torch.ao.quantization.observer import ObserverBase

from translate import Unsupported

from quant_graph import channel_column

ACT_DTYPES = {"uint8": (torch.quint8, 0, 255), "int8": (torch.qint8, -128, 127)}


class GraphActObserver(ObserverBase):
    def __init__(self, dtype=torch.quint8, **kwargs):
        super().__init__(dtype=dtype)
        self.qscheme = torch.per_tensor_affine
        self.quant_min, self.quant_max = (0, 255) if dtype == torch.quint8 else (-128, 127)
        self.eps = 2.0 ** -12  # the scale floor qnnpack's backend config asks observers for
        self.params = None  # QParams of the graph, set by assign()
        self.seen = None  # (min, max) seen in calibration
        self.value = None  # the float value of the model it observes (for messages)

    def assign(self, params, value):
        self.params, self.value = params, value
        self.dtype, self.quant_min, self.quant_max = ACT_DTYPES[params.type]

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
        if getattr(self, "calibrated", False):
            lo, hi = self.seen if self.seen else (0.0, 0.0)
            lo, hi = min(lo, 0.0), max(hi, 0.0)
            scale = max((hi - lo) / 255.0, float(torch.finfo(torch.float32).eps))
            zp = int(min(255, max(0, round(-lo / scale))))
            return torch.tensor([scale], dtype=torch.float), torch.tensor([zp], dtype=torch.int)
        if self.params is None:
            raise RuntimeError("fusefuzz adapter: an observer the graph gave no parameters")
        return (torch.tensor([self.params.scale], dtype=torch.float),
                torch.tensor([self.params.zero_point], dtype=torch.int))

    def extra_repr(self):
        return "graph %r of %s" % (self.params, self.value)


class GraphWeightObserver(ObserverBase):
    def __init__(self, grid=None, dtype=torch.qint8, per_channel_only=False, **kwargs):
        super().__init__(dtype=dtype)
        self.grid = grid
        self.per_channel_only = per_channel_only  # QAT: its FakeQuantize is per channel
        self.qscheme = torch.per_channel_symmetric
        self.ch_axis = 0
        self.quant_min, self.quant_max = -128, 127
        self.eps = 2.0 ** -12
        self.weight = None

    def forward(self, w):
        self.weight = w.detach().clone()
        # The scheme is read before calculate_qparams (FX's reference modules), so it is
        # decided here, when the weight is seen.
        _, own = self.scales()
        per_tensor = own and not self.grid.per_channel and not self.per_channel_only
        self.qscheme = torch.per_tensor_symmetric if per_tensor else torch.per_channel_symmetric
        return w

    def scales(self):
        """(per-tensor scale or per-channel scales, whether the weight is the graph's own)."""
        g = self.grid
        if g is None or self.weight is None:
            raise RuntimeError("fusefuzz adapter: a weight observer without the graph's grid")
        w = self.weight.numpy().astype(np.float64)
        if w.shape != g.ints.shape:
            raise RuntimeError("fusefuzz adapter: weight of shape %s, graph grid %s" %
                               (list(w.shape), list(g.ints.shape)))
        own = (g.ints * channel_column(g.scales.astype(np.float32), g.ints.ndim)).astype(
            np.float32)
        if np.array_equal(self.weight.numpy(), own):
            return g.scales.copy(), True
        m = w.shape[0]
        num = np.abs(w.reshape(m, -1)).sum(axis=1)
        den = np.abs(g.ints.astype(np.float64).reshape(m, -1)).sum(axis=1)
        s = np.where(den > 0, num / np.where(den > 0, den, 1), g.scales)
        s = np.where(s > 0, s, g.scales)  # an all-zero channel keeps the graph's scale
        s = s.astype(np.float32).astype(np.float64)
        # A BatchNorm scale < 0 negates the integers: -128 would become +128, which int8
        # cannot hold, so PyTorch's fold saturates it to 127 where the graph's integers say
        # otherwise. No grid keeps the integers then; fusefuzz's qdq-conv-bn-fold refuses the
        # same fold, so the adapter does too instead of reporting the saturation as a bug.
        q = np.rint(w / channel_column(s, w.ndim))
        over = np.argwhere(q > 127)
        if over.size:
            c = int(over[0][0])
            raise Unsupported("a BatchNorm with a negative scale folded into a conv weight "
                              "negates integer -128 of output channel %d to +128, which int8 "
                              "cannot hold (the fold saturates it; qdq-conv-bn-fold refuses "
                              "this fold too)" % c)
        return s, False

    @torch.jit.export
    def calculate_qparams(self):
        s, _ = self.scales()
        if self.qscheme == torch.per_tensor_symmetric:
            return torch.tensor([s[0]], dtype=torch.float), torch.tensor([0], dtype=torch.int)
        return (torch.tensor(s, dtype=torch.double),
                torch.zeros(len(s), dtype=torch.int64))


def qconfig(grid=None, qat=False):
    """A QConfig of the graph observers (FakeQuantize around them for QAT)."""
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
