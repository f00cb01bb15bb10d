# PyTorch 1.13.1 (Debian python3-torch), onednn engine: on an x86 CPU without VNNI (AVX2,
# AVX-512 without VNNI), oneDNN's uint8 x int8 convolution sums two products in a saturating
# int16 (vpmaddubsw), so a quantized conv whose input and weights are both near their type's
# limit comes out wrong. oneDNN documents it (its "int8 computations" nuances); PyTorch 2 warns
# that the onednn qconfig's reduce_range=False "may have accuracy issues" without VNNI; torch
# 1.13 says nothing. The QNNPACK engine (16-bit products) is exact on the same conv.
# The conv: 2 input channels, 1x1, W = [127, 127] int8 at s 2^-8, x = [255, 255] uint8 at s 1:
# 255 * 127 * 2 = 64770 steps of 2^-8, i.e. 253.01 -> 253; the saturated pair 32767 gives 128.
# oneDNN is run capped at AVX2 (ONEDNN_MAX_CPU_ISA, which oneDNN reads at its first use), so that
# a CPU with VNNI shows the kernel that a CPU without runs; then as this CPU runs it.
# Found by `fuzz --quant --target pytorch:ptq_fx` and the hand-built graphs' tests on an
# AVX2-only CI machine. Exit 1 while the bug is there, 0 when not, 77 on a CPU without AVX2.
import os
import subprocess
import sys

if len(sys.argv) == 1:
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":")[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        flags = []
    if "avx2" not in flags:
        print("this CPU has no AVX2: oneDNN does not run the kernel shown here; skipped")
        raise SystemExit(77)
    capped = subprocess.run([sys.executable, __file__, "onednn"], check=True, capture_output=True,
                            text=True, env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")).stdout
    native = subprocess.run([sys.executable, __file__, "onednn"], check=True, capture_output=True,
                            text=True).stdout
    qnnpack = subprocess.run([sys.executable, __file__, "qnnpack"], check=True,
                             capture_output=True, text=True).stdout
    vnni = "avx512_vnni" in flags or "avx_vnni" in flags
    print("expected 253; onednn capped at AVX2 %s, onednn on this CPU (%s) %s, qnnpack %s" %
          (capped.strip(), "VNNI" if vnni else "no VNNI", native.strip(), qnnpack.strip()))
    if int(capped) != 253:
        print("onednn u8s8 conv saturated its int16 pair sum without VNNI")
    raise SystemExit(1 if int(capped) != 253 else 0)

import torch  # noqa: E402
import torch.ao.nn.quantized as nnq  # noqa: E402

torch.backends.quantized.engine = sys.argv[1]
conv = nnq.Conv2d(2, 1, 1)
w = torch.quantize_per_tensor(torch.full((1, 2, 1, 1), 127 * 2.0 ** -8), 2.0 ** -8, 0, torch.qint8)
conv.set_weight_bias(w, torch.zeros(1))
conv.scale, conv.zero_point = 1.0, 0
x = torch.quantize_per_tensor(torch.full((1, 2, 1, 1), 255.0), 1.0, 0, torch.quint8)
print(conv(x).int_repr().item())
