# PyTorch 1.13.1 (Debian python3-torch), QNNPACK engine: a quantized conv quantizes its float
# bias onto the int32 grid s_x * s_w and silently saturates it there. When bias / (s_x * s_w)
# exceeds 2^31 the bias is cut short and the output is wrong; onednn keeps the bias and is
# right. PTQ reaches it by fusion: a BatchNorm with a small gamma/std folded into the conv makes
# the folded weight's scale small while the folded bias (BN's beta) stays large. Found by
# `fuzz --quant --target pytorch:ptq_fx_qnnpack` as Conv -> BatchNorm(scale 3.8e-6, bias 1) -> Q.
# Exit 1 while the bug is there.
import torch
import torch.ao.nn.quantized as nnq


def conv_output(engine, s_w):
    torch.backends.quantized.engine = engine
    conv = nnq.Conv2d(1, 1, 1)
    w = torch.quantize_per_tensor(torch.full((1, 1, 1, 1), -107 * s_w), s_w, 0, torch.qint8)
    conv.set_weight_bias(w, torch.tensor([1.0]))  # x = 0: the output is the bias alone, 1.0
    conv.scale, conv.zero_point = 0.0078125, 0  # 1.0 is integer 128
    x = torch.quantize_per_tensor(torch.zeros(1, 1, 1, 1), 2.0 ** -12, 0, torch.quint8)
    return conv(x).int_repr().item()


wrong = False
for s_w in (1e-4, 1e-6, 4.6975e-8):
    steps = 1.0 / (2.0 ** -12 * s_w)
    onednn, qnnpack = conv_output("onednn", s_w), conv_output("qnnpack", s_w)
    bad = qnnpack != 128
    wrong = wrong or bad
    print("weight scale %-9g bias %.3g int32 steps: expected 128, onednn %3d, qnnpack %3d%s" %
          (s_w, steps, onednn, qnnpack, "  <- bias saturated at int32" if bad else ""))
raise SystemExit(1 if wrong else 0)
