# PyTorch 1.13.1 (Debian python3-torch), QNNPACK engine: max_pool2d with a 1x1 kernel on a
# quantized tensor fails an internal assert ("failed to create QNNPACK MaxPool operator";
# QNNPACK itself says "1x1 pooling is meaningless") instead of returning its input; onednn
# computes it. A 1x1 MaxPool is valid ONNX and valid PyTorch (it is the identity, or a
# subsampling with a stride); the QNNPACK path should skip the operator. Found by
# `fuzz --quant --target pytorch:ptq_fx_qnnpack` (127 cases in 30 minutes). Exit 1 while the
# bug is there.
import torch

x = torch.quantize_per_tensor(torch.rand(1, 1, 4, 4), 0.0078125, 0, torch.quint8)
torch.backends.quantized.engine = "onednn"
expected = torch.nn.functional.max_pool2d(x, kernel_size=1).int_repr()
torch.backends.quantized.engine = "qnnpack"
try:
    y = torch.nn.functional.max_pool2d(x, kernel_size=1)
except RuntimeError as e:
    print("qnnpack max_pool2d(kernel_size=1):", str(e).strip().splitlines()[0][:200])
    raise SystemExit(1)
print("qnnpack max_pool2d(kernel_size=1) computed; equal to its input:", torch.equal(y.int_repr(), expected))
raise SystemExit(0 if torch.equal(y.int_repr(), expected) else 1)
