# PyTorch 1.13.1 (Debian python3-torch): after torch.jit.optimize_for_inference, an AvgPool2d
# with ceil_mode=True and count_include_pad=True behind a conv (run by oneDNN) divides the last
# window by the full kernel area, counting cells beyond the padded input that eager PyTorch
# (and ONNX) leave out. Exit 1 while the bug is there.
import torch
m = torch.nn.Sequential(torch.nn.Conv2d(1, 1, 1, bias=False),
                        torch.nn.AvgPool2d(2, 3, ceil_mode=True, count_include_pad=True)).eval()
torch.nn.init.ones_(m[0].weight)
x = torch.ones(1, 1, 7, 5)
opt = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(m)))
with torch.no_grad():
    eager, optimized = m(x), opt(x)
print("eager    ", eager.flatten().tolist())      # [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
print("optimized", optimized.flatten().tolist())  # [1.0, 1.0, 1.0, 1.0, 0.5, 0.5]
raise SystemExit(0 if torch.equal(eager, optimized) else 1)
