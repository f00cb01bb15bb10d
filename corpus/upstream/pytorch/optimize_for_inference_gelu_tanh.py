# PyTorch 1.13.1 (Debian python3-torch): torch.jit.optimize_for_inference moves a
# GELU(approximate="tanh") behind a conv onto oneDNN, whose kernel refuses it at run time:
# "RuntimeError: mkldnn_gelu: fast, approximate gelu is not supported".
# Exit 1 while the bug is there.
import torch
m = torch.nn.Sequential(torch.nn.Conv2d(1, 1, 1), torch.nn.GELU(approximate="tanh")).eval()
x = torch.randn(1, 1, 2, 2)
opt = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(m)))
try:
    with torch.no_grad():
        print("max |eager - optimized|:", (m(x) - opt(x)).abs().max().item())
except RuntimeError as e:
    print(str(e).strip().splitlines()[-1])
    raise SystemExit(1)
