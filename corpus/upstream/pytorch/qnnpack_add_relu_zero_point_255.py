# PyTorch 1.13.1 (Debian python3-torch), QNNPACK engine: quantized::add_relu with an output zero
# point of 255 (quint8) fails with an internal assert instead of computing. ReLU of a sum on a
# grid whose zero point is qmax leaves every element at 255 (real value 0, or the clamp), and
# quantized::add (no ReLU) computes the same scale and zero point fine; onednn computes both.
# QNNPACK's add operator is created with the output range [zero point, 255] = [255, 255] and
# refuses it ("range min must be below range max"). Exit 1 while the bug is there.
import torch

torch.backends.quantized.engine = "qnnpack"
a = torch.quantize_per_tensor(torch.tensor([[-1.0, 0.5, 1.0, 2.0]]), 0.02, 100, torch.quint8)
b = torch.quantize_per_tensor(torch.tensor([[0.5, -0.25, 1.0, -3.0]]), 0.03, 120, torch.quint8)
expected = torch.full((1, 4), 255, dtype=torch.uint8)
try:
    y = torch.ops.quantized.add_relu(a, b, 0.01, 255)
except RuntimeError as e:
    print(str(e).strip().splitlines()[0][:200])
    raise SystemExit(1)
print("add_relu with zero point 255:", y.int_repr().tolist())
raise SystemExit(0 if torch.equal(y.int_repr(), expected) else 1)
