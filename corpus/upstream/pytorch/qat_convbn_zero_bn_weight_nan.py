# PyTorch 1.13.1 (Debian python3-torch): the QAT ConvBn2d module that prepare_qat_fx (and
# fuse_modules_qat) makes of Conv2d -> BatchNorm2d computes NaN for every output channel whose
# BatchNorm weight (gamma) is 0. Such a channel is the constant beta, but the default
# ("approximate") forward scales the weight by gamma / running_std and then divides the conv
# output by that factor: 0 / 0. The NaN reaches the loss and every gradient, so an optimizer
# step makes the weights NaN (even at learning rate 0: w - 0 * NaN), and convert_fx then
# quantizes a NaN model. The opt-in slow path (_enable_slow_path_for_better_numerical_stability,
# PyTorch PR #77434) computes beta. Exit 1 while the bug is there.
import torch
import torch.nn as nn
import torch.nn.intrinsic as nni
import torch.nn.intrinsic.qat as nniqat
from torch.ao.quantization import get_default_qat_qconfig

torch.backends.quantized.engine = "onednn"


def qat_convbn(slow_path):
    conv = nn.Conv2d(2, 2, 1, bias=False)
    bn = nn.BatchNorm2d(2)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor([[[[0.5]], [[0.25]]], [[[-0.5]], [[1.0]]]]))
        bn.weight.copy_(torch.tensor([1.0, 0.0]))  # channel 1: gamma 0
        bn.bias.copy_(torch.tensor([0.0, 1.0]))
    fused = nni.ConvBn2d(conv, bn)
    fused.qconfig = get_default_qat_qconfig("onednn")
    m = nniqat.ConvBn2d.from_float(fused)
    m._enable_slow_path_for_better_numerical_stability = slow_path
    m.train()
    m.freeze_bn_stats()
    return m, conv, bn


x = torch.tensor([[[[1.0]], [[2.0]]]])
m, conv, bn = qat_convbn(slow_path=False)
with torch.no_grad():
    expected = bn.eval()(conv(x)).flatten()
got = m(x).flatten()
got.sum().backward()
print("float Conv -> BN:        ", [round(v, 4) for v in expected.tolist()])
print("QAT ConvBn2d (default):  ", got.tolist(), "weight grad NaN:",
      bool(torch.isnan(m.weight.grad).any()))
slow, _, _ = qat_convbn(slow_path=True)
print("QAT ConvBn2d (slow path):", [round(v, 4) for v in slow(x).flatten().tolist()])
if torch.isnan(got).any():
    print("gamma 0 channel is NaN: the bug is there")
    raise SystemExit(1)
raise SystemExit(0 if torch.allclose(got, expected, atol=0.05) else 1)
