# PyTorch 1.13.1 (Debian python3-torch): torch.jit.optimize_for_inference leaves ReLU6 (also
# Hardtanh/Clip, Hardswish, Hardsigmoid) after a conv unapplied on most elements when the
# channel count is not a multiple of oneDNN's block (16 with AVX-512).
# Exit 1 while the bug is there.
import torch
m = torch.nn.Sequential(torch.nn.Conv2d(1, 1, 1, bias=False), torch.nn.ReLU6()).eval()
torch.nn.init.ones_(m[0].weight)
x = torch.tensor([[[[-1.0, -2.0, -3.0, 7.0]]]])
opt = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(m)))
with torch.no_grad():
    eager, optimized = m(x), opt(x)
print("eager    ", eager.flatten().tolist())      # [0.0, 0.0, 0.0, 6.0]
print("optimized", optimized.flatten().tolist())  # [0.0, -2.0, -3.0, 7.0]
raise SystemExit(0 if torch.equal(eager, optimized) else 1)
