# PyTorch 1.13.1 (Debian python3-torch), onednn engine: a quantized conv whose requantization
# scale input_scale * weight_scale / output_scale is exactly 1.0 corrupts the heap. The process
# dies in glibc ("free(): invalid next size (fast)", "malloc_consolidate(): invalid chunk size")
# or with SIGSEGV, from the first call on; the same conv with the output scale doubled
# (requantization scale 0.5) computes fine, and qnnpack computes both. A campaign's long-running
# adapter process also answered 136, 153 and 254 for all-zero convs that never replayed: memory
# this bug overwrote earlier in the same process, most likely. Each conv runs in a child process
# so that the parent can say which died. Exit 1 while the bug is there.
import subprocess
import sys

CHILD = r"""
import sys, torch
torch.backends.quantized.engine = sys.argv[1]
import torch.ao.nn.quantized as nnq
x_scale, w_scale, y_scale = 1.0, 1 / 256, float(sys.argv[2])
conv = nnq.Conv2d(3, 3, 1, groups=3, bias=False)
w = torch.quantize_per_tensor(torch.tensor([0.25, -0.5, 0.125]).reshape(3, 1, 1, 1), w_scale, 0,
                              torch.qint8)
conv.set_weight_bias(w, None)
conv.scale, conv.zero_point = y_scale, 0
x = torch.quantize_per_tensor(torch.arange(48.0).reshape(1, 3, 4, 4), x_scale, 0, torch.quint8)
y = conv(x).int_repr()
# Reference on the integer grid: round(x * w_int * x_scale * w_scale / y_scale), clamped.
ref = (x.int_repr().double() * w.int_repr().double().reshape(1, 3, 1, 1)
       * (x_scale * w_scale / y_scale)).round().clamp(0, 255).to(torch.uint8)
print("right" if torch.equal(y, ref) else "WRONG %s vs %s" % (y.flatten()[:6].tolist(),
                                                             ref.flatten()[:6].tolist()))
"""


def run(engine, y_scale):
    p = subprocess.run([sys.executable, "-c", CHILD, engine, repr(y_scale)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return "died of signal %d: %s" % (-p.returncode, last)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return "exit %d: %s" % (p.returncode, last)
    return p.stdout.strip()


results = {}
for engine, y_scale in (("onednn", 1 / 256), ("onednn", 1 / 128), ("qnnpack", 1 / 256)):
    results[(engine, y_scale)] = run(engine, y_scale)
    print("%-8s requantization scale %-4g %s" % (engine, 1.0 * (1 / 256) / y_scale,
                                                  results[(engine, y_scale)]))
bug = results[("onednn", 1 / 256)] != "right"
if bug:
    print("onednn quantized conv with a requantization scale of exactly 1.0: %s"
          % results[("onednn", 1 / 256)])
raise SystemExit(1 if bug else 0)
