#!/usr/bin/env python3
# make_qat_model.py OUT.onnx per-tensor|per-channel: a QAT-prepared (fake-quantized) small CNN exported by
# torch.onnx.export at opset 13: a QDQ model from another tool (issue 43, item 5). The export
# keeps float weights behind QuantizeLinear -> DequantizeLinear; the importer folds a
# QuantizeLinear of a constant into the integer weight (docs/check.md, "QDQ models from other
# tools").
import sys, torch, torch.nn as nn
torch.manual_seed(0)
per_channel = sys.argv[2] == "per-channel"
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.quant = torch.quantization.QuantStub(); s.dequant = torch.quantization.DeQuantStub()
        s.c1 = nn.Conv2d(3, 8, 3, padding=1); s.b1 = nn.BatchNorm2d(8); s.r1 = nn.ReLU()
        s.c2 = nn.Conv2d(8, 8, 3, padding=1); s.r2 = nn.ReLU()
        s.c3 = nn.Conv2d(8, 4, 1)
    def forward(s, x):
        x = s.quant(x)
        x = s.r1(s.b1(s.c1(x))); x = s.r2(s.c2(x)); x = s.c3(x)
        return s.dequant(x)
m = Net().train()
m = torch.ao.quantization.fuse_modules_qat(m, [["c1", "b1", "r1"], ["c2", "r2"]])
Q = torch.quantization
act = Q.FakeQuantize.with_args(observer=Q.MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8)
if per_channel:
    w = Q.FakeQuantize.with_args(observer=Q.MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
else:
    w = Q.FakeQuantize.with_args(observer=Q.MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)
qc = Q.QConfig(activation=act, weight=w)
m.qconfig = qc
torch.quantization.prepare_qat(m, inplace=True)
for _ in range(8): m(torch.randn(2, 3, 16, 16))
m.eval(); m.apply(torch.quantization.disable_observer)
torch.onnx.export(m, torch.randn(1, 3, 16, 16), sys.argv[1], opset_version=13, input_names=["x"], output_names=["y"])
print("wrote", sys.argv[1])
